"""spm/ of tests/data/hf/ (tools/make_hf_fixtures.py): SentencePiece's normaliser, and the NFKC cases.

``spm/`` holds a T5 tokenizer converted by transformers from a SentencePiece model trained here with
nmt_nfkc, its ``tokenizer.json`` (which carries the ``Precompiled`` charsmap) gzipped, and its ids of
lines.npz's texts plus ``NFKC_CASES``: full-width and compatibility characters, combining marks, emoji
sequences and odd spaces, where NFKC and the compiled rules do their work. The tests keep their own
copy of ``NFKC_CASES`` (a student release has no tools/make_*) and compare it with this one; the
``line_ids.npz`` of xlnet/ and deberta*/ (``spm_texts``) and tools/make_hf_fixtures_tokenizers.py
tokenize the same texts. Needs ``pip install sentencepiece protobuf``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

NFKC_CASES = ["ﬁne ① ｆｕｌｌ　ｗｉｄｔｈ Ⅻ ™ ½ ㎞", "e\u0301 a\u0308 n\u0303 ḱ\u0323", "👨\u200d👩\u200d👧 🇹🇼 👍🏽",
              "Ｈｅｌｌｏ，　ｗｏｒｌｄ！", "x\u00a0y\u2003z", "tab\there  and   runs", "\u3000全角スペース", "ﾊﾝｶｸ ｶﾀｶﾅ", "Å Ω K"]


def spm_texts(out: Path) -> list[str]:
    with np.load(out / "lines.npz", allow_pickle=False) as f:
        return [str(t) for t in f["texts"]] + NFKC_CASES


def write_spm(out: Path) -> None:
    """spm/: a T5 tokenizer converted by transformers from a SentencePiece model trained here with
    nmt_nfkc (its tokenizer.json carries the ``Precompiled`` charsmap; gzipped, 175 KB) and the ids
    of lines.npz's texts plus NFKC cases. Needs ``pip install sentencepiece protobuf``."""
    import gzip
    import tempfile

    import sentencepiece as spm
    import transformers as tf
    texts = spm_texts(out)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.txt"
        corpus.write_text("\n".join(t for t in texts if t.strip()), encoding="utf-8")
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(Path(tmp) / "spiece"), vocab_size=300,
                                       model_type="unigram", normalization_rule_name="nmt_nfkc", pad_id=0,
                                       eos_id=1, unk_id=2, bos_id=-1, character_coverage=1.0, minloglevel=2)
        tok = tf.T5Tokenizer.from_pretrained(tmp, extra_ids=3)
        tok.save_pretrained(Path(tmp) / "saved")
        folder = out / "spm"
        folder.mkdir(exist_ok=True)
        raw = (Path(tmp) / "saved" / "tokenizer.json").read_bytes()
        (folder / "tokenizer.json.gz").write_bytes(gzip.compress(raw, mtime=0))
        for name in ("tokenizer_config.json",):
            (folder / name).write_bytes((Path(tmp) / "saved" / name).read_bytes())
    ids = [tok(t)["input_ids"] for t in texts]
    np.savez_compressed(folder / "ids.npz", ids=np.array([i for row in ids for i in row], dtype=np.int32),
                        offsets=np.cumsum([0] + [len(row) for row in ids]).astype(np.int64))


def spm_match(out: Path) -> bool:
    import gzip
    import tempfile

    import transformers as tf
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "tokenizer.json").write_bytes(gzip.decompress((out / "spm" / "tokenizer.json.gz").read_bytes()))
        (Path(tmp) / "tokenizer_config.json").write_bytes((out / "spm" / "tokenizer_config.json").read_bytes())
        tok = tf.AutoTokenizer.from_pretrained(tmp)
        with np.load(out / "spm" / "ids.npz", allow_pickle=False) as f:
            ids, off = f["ids"], f["offsets"]
        return all(tok(t)["input_ids"] == ids[off[k]:off[k + 1]].tolist() for k, t in enumerate(spm_texts(out)))
