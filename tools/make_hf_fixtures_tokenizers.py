"""Tokenizer fixtures beside tests/data/hf/'s models: transformers' decoded text of the stored lines,
and three tokenizer folders without ``tokenizer.json``, as the hub serves them.

    .venv/bin/python tools/make_hf_fixtures_tokenizers.py [--out tests/data/hf]     # writes
    .venv/bin/python tools/make_hf_fixtures_tokenizers.py --check                   # writes nothing

Needs transformers 5 (and ``sentencepiece`` to train ``deberta-v3-spm/spm.model``; ``--check`` does
not retrain), in this tool only: the tests read what it writes without either. Run it after
``tools/make_hf_fixtures.py``, whose folders, ``lines.npz`` and ``line_ids.npz`` it reads.

* ``gpt2-vocab-merges/`` and ``deberta-vocab-merges/``: the ``gpt2/`` and ``deberta/`` fixtures'
  tokenizers without ``tokenizer.json``, as openai-community/gpt2, microsoft/deberta-base and the
  checkpoints saved by transformers' slow tokenizers ship them: ``vocab.json`` + ``merges.txt``
  (taken from the ``tokenizer.json``), ``config.json`` (copied) and the hub's bare
  ``tokenizer_config.json`` (the special tokens are the class's defaults). Their ids are their
  source's (``--check`` verifies).
* ``deberta-v3-spm/``: a DeBERTa-v3 tokenizer as microsoft/deberta-v3-* ship it, ``spm.model`` with no
  ``tokenizer.json``: a SentencePiece Unigram model (300 pieces; ``[PAD] [CLS] [SEP] [UNK]`` are
  pieces 0–3, and ``[MASK]`` is no piece: DebertaV2Tokenizer appends it after them), trained here on
  the fixtures' corpus and 300 of the lines, the hub's ``tokenizer_config.json`` and a
  ``config.json`` naming ``deberta-v2``; ``line_ids.npz``, transformers' ids of ``lines.npz``'s texts
  plus ``make_hf_fixtures.NFKC_CASES``. The rules here are the NFC compositions the lines need, tab /
  newline → space and, as nmt_nfkc (the released model's), full-width ASCII → ASCII. transformers 5.25
  applies them, as SentencePiece does; 5.0-5.24 normalised DeBERTa-v2 with NFC instead, which agrees on
  the lines and differs on 3 of the NFKC cases (their full-width text): the ids are 5.25's.
* ``decoded.json.gz``: ``{name: {"keep": [...], "skip": [...]}}`` for each tokenizer folder of
  ``DECODED``: what ``tokenizer.decode(ids)`` and ``decode(ids, skip_special_tokens=True)`` return for
  each line's ids (transformers' default clean-up, as the folder's files set it). ``--check`` also
  decodes the lines with ``bert/``'s vocabulary written as a ``vocab.txt`` folder: the same text.

The lines and ids are read by ``tests/models/hf_lines.py``, as the tests read them.
"""
from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import shutil
import sys
import tempfile
import unicodedata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.models.hf_lines import (DECODED, DECODED_FILE, VOCAB_MERGES, line_ids,  # noqa: E402
                                   line_texts, read_decoded, texts)

OUT = ROOT / "tests" / "data" / "hf"
HUB_CONFIGS = {"gpt2-vocab-merges": {"model_max_length": 1024},                      # openai-community/gpt2's
               "deberta-vocab-merges": {"do_lower_case": False, "vocab_type": "gpt2"},  # microsoft/deberta-base's
               "deberta-v3-spm": {"do_lower_case": False, "vocab_type": "spm"}}         # microsoft/deberta-v3-*'s


def fixture_tool():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import make_hf_fixtures
    finally:
        sys.path.pop(0)
    return make_hf_fixtures


def nfkc(name: str, out: Path) -> list[str]:
    return line_texts(name, fixture_tool().NFKC_CASES, out)


def save_ids(path: Path, rows: list[list[int]]) -> None:
    np.savez_compressed(path, ids=np.array([i for row in rows for i in row], dtype=np.int32),
                        offsets=np.cumsum([0] + [len(row) for row in rows]).astype(np.int64))


# ---- the folders -----------------------------------------------------------------------------------

def write_vocab_merges(out: Path, name: str) -> Path:
    source, target = VOCAB_MERGES[name], out / name
    target.mkdir(parents=True, exist_ok=True)
    model = json.loads((out / source / "tokenizer.json").read_text(encoding="utf-8"))["model"]
    (target / "vocab.json").write_text(json.dumps(model["vocab"], ensure_ascii=False) + "\n", encoding="utf-8")
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    (target / "merges.txt").write_text("#version: 0.2\n" + "".join(m + "\n" for m in merges), encoding="utf-8")
    (target / "tokenizer_config.json").write_text(json.dumps(HUB_CONFIGS[name], indent=2) + "\n", encoding="utf-8")
    shutil.copy(out / source / "config.json", target / "config.json")
    return target


def nfc_rules(lines: list[str]) -> list[tuple[str, str]]:
    """SentencePiece rules that do what NFC does to ``lines`` (a base character and the marks after
    it → their composed form), tab / newline / carriage return → space, full-width ASCII → ASCII."""
    rules = {c: " " for c in "\t\n\r"} | {chr(0xFF01 + k): chr(0x21 + k) for k in range(94)}
    for line in lines:
        k = 0
        while k < len(line):
            j = k + 1
            while j < len(line) and unicodedata.combining(line[j]):
                j += 1
            seq = line[k:j]
            if unicodedata.normalize("NFC", seq) != seq:
                rules[seq] = unicodedata.normalize("NFC", seq)
            k = j
    return sorted(rules.items())


def write_deberta_v3_spm(out: Path) -> Path:
    import sentencepiece as spm
    tool = fixture_tool()
    target = out / "deberta-v3-spm"
    target.mkdir(parents=True, exist_ok=True)
    lines = texts(out)
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):   # relative names: the model records them
        corpus = tool.CORPUS * 5 + [t.replace("\n", " ") for t in lines[:300] if t.strip()]
        Path("corpus.txt").write_text("\n".join(corpus), encoding="utf-8")
        Path("rules.tsv").write_text("".join(" ".join(f"{ord(c):X}" for c in a) + "\t" + " ".join(
            f"{ord(c):X}" for c in b) + "\n" for a, b in nfc_rules(lines)), encoding="utf-8")
        spm.SentencePieceTrainer.train(input="corpus.txt", model_prefix="spm", vocab_size=300, model_type="unigram",
                                       num_threads=1, minloglevel=2, character_coverage=1.0, hard_vocab_limit=True,
                                       pad_id=0, pad_piece="[PAD]", bos_id=1, bos_piece="[CLS]", eos_id=2,
                                       eos_piece="[SEP]", unk_id=3, unk_piece="[UNK]",
                                       normalization_rule_tsv="rules.tsv")
        shutil.copy("spm.model", target / "spm.model")
    (target / "tokenizer_config.json").write_text(json.dumps(HUB_CONFIGS["deberta-v3-spm"], indent=2) + "\n",
                                                  encoding="utf-8")
    (target / "config.json").write_text(json.dumps({"model_type": "deberta-v2"}, indent=2) + "\n", encoding="utf-8")
    save_ids(target / "line_ids.npz", transformers_ids(target, nfkc("deberta-v3-spm", out)))
    return target


# ---- what transformers says ------------------------------------------------------------------------

def transformers_ids(folder: Path, lines: list[str]) -> list[list[int]]:
    import transformers as tf
    tok = tf.AutoTokenizer.from_pretrained(folder)
    return [tok(t)["input_ids"] for t in lines]


def transformers_decoded(out: Path, name: str, folder: Path | None = None) -> dict[str, list[str]]:
    import transformers as tf
    tok = tf.AutoTokenizer.from_pretrained(folder or out / name)
    rows = line_ids(name, out)
    return {"keep": [tok.decode(r) for r in rows], "skip": [tok.decode(r, skip_special_tokens=True) for r in rows]}


def write_decoded(out: Path) -> None:
    decoded = {name: transformers_decoded(out, name) for name in DECODED}
    text = json.dumps(decoded, ensure_ascii=False, indent=0) + "\n"
    (out / DECODED_FILE).write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))


def vocab_txt_folder(out: Path, tmp: Path) -> Path:
    """``bert/``'s tokenizer as ``vocab.txt`` alone (an older BERT checkpoint's layout)."""
    vocab = json.loads((out / "bert" / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    (tmp / "vocab.txt").write_text("".join(t + "\n" for t in sorted(vocab, key=vocab.get)), encoding="utf-8")
    config = json.loads((out / "bert" / "tokenizer_config.json").read_text(encoding="utf-8"))
    (tmp / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return tmp


def check(out: Path) -> list[str]:
    """What differs between the stored files and transformers now (empty: nothing)."""
    problems, stored = [], read_decoded(out)
    for name in DECODED:
        for mode, strings in transformers_decoded(out, name).items():
            bad = sum(a != b for a, b in zip(strings, stored[name][mode]))
            if bad or len(strings) != len(stored[name][mode]):
                problems.append(f"{DECODED_FILE} {name} {mode}: {bad} of {len(strings)} lines differ")
    for name in (*VOCAB_MERGES, "deberta-v3-spm"):
        bad = sum(a != b for a, b in zip(transformers_ids(out / name, nfkc(name, out)), line_ids(name, out)))
        if bad:
            problems.append(f"{name}: transformers' ids differ from the stored ones on {bad} lines")
    with tempfile.TemporaryDirectory() as tmp:   # a vocab.txt folder decodes as bert/'s tokenizer.json does
        folder = vocab_txt_folder(out, Path(tmp))
        again = transformers_decoded(out, "bert", folder)
        bad = sum(a != b for mode in again for a, b in zip(again[mode], stored["bert"][mode]))
        if bad:
            problems.append(f"bert as vocab.txt: {bad} decoded lines differ from bert/'s")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="recompute with transformers and compare; write nothing")
    args = ap.parse_args(argv)
    if args.check:
        problems = check(args.out)
        folders = ", ".join(f"{name}/" for name in (*VOCAB_MERGES, "deberta-v3-spm"))
        print("\n".join(problems) or f"{DECODED_FILE}, {folders}: what transformers gives")
        return 1 if problems else 0
    for folder in (*(write_vocab_merges(args.out, name) for name in VOCAB_MERGES), write_deberta_v3_spm(args.out)):
        print(f"{folder}: {sum(p.stat().st_size for p in folder.iterdir()) / 1024:.0f} KiB")
    write_decoded(args.out)
    print(f"{DECODED_FILE}: {(args.out / DECODED_FILE).stat().st_size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
