"""The tokenizers of tests/data/hf/'s fixtures (tools/make_hf_fixtures.py), one per kind, trained here.

``make_tokenizer(kind)`` for each kind of ``FIXTURES``: WordPiece (BERT, DistilBERT, ELECTRA),
byte-level BPE (GPT-2, RoBERTa, BART; DeBERTa v1) and Unigram (T5; DeBERTa v2/v3) trained with
``tokenizers`` on ``CORPUS`` and handed to transformers' tokenizer classes, and XLNet's SentencePiece
model (``pip install sentencepiece``) trained on ``CORPUS`` and the standard-library lines of
make_hf_fixtures_lines.py. The trainers break ties in no fixed order, so a rebuild may give a
slightly different vocabulary. tools/make_course_fixtures.py builds its tokenizers from these too.
"""
from __future__ import annotations

import json
from pathlib import Path

from make_hf_fixtures_lines import docstring_lines  # tools/ is on the path: python tools/..., or an importer's

CORPUS = [
    "Bert knows Snuffleupagus, and the cats eat fish.",
    "The quick brown fox jumps over the lazy dog.",
    "New York and Los Angeles are large cities.",
    "A tokenizer splits text into pieces; a model reads the pieces.",
    "Transformers attend to every position at once.",
    "She sells sea shells by the sea shore.",
    "Masked language models predict the hidden words.",
    "The encoder reads the source and the decoder writes the target.",
    "Dogs chase cats, cats chase mice, mice eat cheese.",
    "Hello world! How are you today?",
] * 3


def wordpiece_vocab(size: int = 160, lowercase: bool = True) -> dict:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=size, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.train_from_iterator(CORPUS, trainer)
    return tok.get_vocab()


def bpe_vocab_merges(specials: list[str], size: int = 300):
    from tokenizers import ByteLevelBPETokenizer
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(CORPUS, vocab_size=size, min_frequency=2, special_tokens=specials)
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return model["vocab"], merges


def unigram_vocab(size: int = 120) -> list:
    from tokenizers import SentencePieceUnigramTokenizer
    tok = SentencePieceUnigramTokenizer()
    tok.train_from_iterator(CORPUS, vocab_size=size, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>")
    return [tuple(p) for p in json.loads(tok.to_str())["model"]["vocab"]]


def make_tokenizer(kind: str):
    import transformers as tf
    from tokenizers import AddedToken
    if kind == "wordpiece":
        return tf.BertTokenizer(vocab=wordpiece_vocab())
    if kind == "roberta":
        vocab, merges = bpe_vocab_merges(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
        # as roberta-base ships it: "<mask>" takes the space before it
        return tf.RobertaTokenizer(vocab=vocab, merges=merges, mask_token=AddedToken("<mask>", lstrip=True))
    if kind == "gpt2":
        vocab, merges = bpe_vocab_merges(["<|endoftext|>"])
        return tf.GPT2Tokenizer(vocab=vocab, merges=merges)
    if kind == "bart":
        vocab, merges = bpe_vocab_merges(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
        return tf.BartTokenizer(vocab=vocab, merges=merges, mask_token=AddedToken("<mask>", lstrip=True))
    if kind == "t5":
        return tf.T5Tokenizer(vocab=unigram_vocab(), extra_ids=4)
    if kind == "xlnet":
        return xlnet_tokenizer()
    if kind in ("deberta", "deberta-v2"):
        return deberta_tokenizer(kind)
    raise ValueError(kind)


# a few SentencePiece normalisation rules (source code points → target), so that the XLNet fixture's
# tokenizer.json carries a small Precompiled charsmap (nmt_nfkc's, as xlnet-base-cased has, is ~240 KB)
XLNET_RULES = {"FF21": "41", "FF41": "61", "FB01": "66 69", "3000": "20", "2460": "31", "2122": "54 4D"}


def xlnet_tokenizer(keep: Path | None = None):
    """XLNet's tokenizer as transformers converts a SentencePiece model: Unigram, the normalizers
    Replace(``) Replace('') NFKD StripAccents Precompiled, Metaspace, ``A <sep> <cls>`` at the end, left
    padding; xlnet-base-cased's special ids (<unk> 0, <s> 1, </s> 2, <cls> 3, <sep> 4, <pad> 5, <mask> 6)."""
    import tempfile

    import sentencepiece as spm
    import transformers as tf
    with tempfile.TemporaryDirectory() as tmp:
        corpus, rules = Path(tmp) / "corpus.txt", Path(tmp) / "rules.tsv"
        corpus.write_text("\n".join(CORPUS * 5 + [t for t in docstring_lines() if t.strip()]), encoding="utf-8")
        rules.write_text("".join(f"{a}\t{b}\n" for a, b in XLNET_RULES.items()), encoding="utf-8")
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(Path(tmp) / "spiece"), vocab_size=200,
                                       model_type="unigram", normalization_rule_tsv=str(rules), unk_id=0, bos_id=1,
                                       eos_id=2, pad_id=-1, character_coverage=0.9995, minloglevel=2, num_threads=1,
                                       control_symbols=["<cls>", "<sep>", "<pad>", "<mask>", "<eod>", "<eop>"])
        if keep is not None:   # the spiece.model itself, as the hub's xlnet-base-cased folder holds it
            __import__("shutil").copy(Path(tmp) / "spiece.model", keep)
        return tf.XLNetTokenizer.from_pretrained(tmp)


# DeBERTa v1 (GPT-2's byte-level BPE, [CLS] … [SEP]) and v2/v3 (SentencePiece Unigram, Metaspace)
DEBERTA_SPECIALS = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]   # deberta-v3's ids 0 … 3 (and its [MASK])


def deberta_tokenizer(kind: str):
    import transformers as tf
    if kind == "deberta":
        vocab, merges = bpe_vocab_merges(DEBERTA_SPECIALS)
        return tf.DebertaTokenizer(vocab=vocab, merges=merges)
    from tokenizers import SentencePieceUnigramTokenizer
    trainer = SentencePieceUnigramTokenizer()
    trainer.train_from_iterator(CORPUS, vocab_size=150, special_tokens=DEBERTA_SPECIALS, unk_token="[UNK]")
    vocab = [tuple(p) for p in json.loads(trainer.to_str())["model"]["vocab"]]
    return tf.DebertaV2Tokenizer(vocab=vocab, unk_id=DEBERTA_SPECIALS.index("[UNK]"))
