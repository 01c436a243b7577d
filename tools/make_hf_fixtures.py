"""Build the tiny Hugging Face fixtures of tests/data/hf/: one random model per architecture.

    pip install torch==2.13.0 && pip install transformers       # this tool only; never at run time
    pip install sentencepiece protobuf                          # for spm/ (T5's Precompiled normalizer)
    python tools/make_hf_fixtures.py [--out tests/data/hf] [--check] [--export-check]
    python tools/make_hf_fixtures.py --derived        # the hub's layouts only, from the stored folders; no torch

Each fixture is a folder the way ``save_pretrained`` writes it (config.json, model.safetensors,
tokenizer files) plus ``expected.npz`` (allow_pickle=False): the inputs of a fixed padded batch
(``input_ids``, ``attention_mask``, and for the encoder-decoders ``decoder_input_ids``) and the
``logits`` that the transformers class returns for them in eval mode, float32; and
``tokens.json``: a few texts with the ids that ``tokenizer(text)["input_ids"]`` gives (xlnet/ also:
``perm_mask``, ``target_mapping``, ``token_type_ids`` and their ``logits_two_stream`` in expected.npz,
and ``line_ids.npz``, its ids of the lines below; needs sentencepiece). Beside them,
``lines.npz`` (514 lines — standard-library docstrings and hard cases — with each tokenizer kind's
ids) and ``spm/`` (a T5 tokenizer converted from a SentencePiece model trained with nmt_nfkc, its
``tokenizer.json`` gzipped, and its ids of the same lines plus NFKC cases).

The models are small (hidden size 32 or less, 2 layers, a vocabulary of a few hundred) and their
weights random: every parameter gets N(0, 0.05²) noise on top of transformers' init, so that
layer-norm weights, biases and BART's ``final_logits_bias`` are not their trivial 1s and 0s and a
wrong name mapping shows. ``--check`` writes nothing: it loads each stored folder back with transformers'
``AutoModelFor…`` / ``AutoTokenizer`` and recomputes the logits and the ids, which must equal the
stored ones (what tests/models/test_pretrained_families.py runs when transformers is installed).
The tokenizer trainers of ``tokenizers`` break ties in no fixed order, so a rebuild may give a
slightly different vocabulary; the check therefore re-derives the expected arrays from the stored
folders rather than from a rebuild.

Derived folders, the layouts the hub serves, written from the stored fixtures with minilm's own
safetensors writer (``--derived``, and after every full build): ``bert-sharded/`` and
``gpt2-sharded/`` (the weights split as ``save_pretrained`` splits a large checkpoint: shards
``model-0000i-of-0000n.safetensors`` + ``model.safetensors.index.json``) and ``bert-legacy-names/``
(the LayerNorms' ``gamma`` / ``beta`` of the original bert-base-* files). They hold no
expected.npz: their logits are their source fixture's. ``--check`` loads them in transformers too.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "hf"

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
TEXTS = ["Bert knows Snuffleupagus", "the cats eat fish.", "Hello world! The lazy dog sleeps today."]
TOKEN_TEXTS = TEXTS + ["Hello  world", "New York, Los Angeles; and the <mask> here.", "",
                       "  naïve Café, 東京 🙂\tdone  ", "don't stop—it's 3.14!"]
TARGETS = ["cats eat fish", "a dog"]


# ---- tokenizers ----------------------------------------------------------------------------------

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


def tiny_deberta(name: str, V: int):
    """v1: separate position projections, no LayerNorm on the relative table, absolute positions at
    the input, embedding_size 16 < hidden 32, the cls.predictions head (legacy). v3-like: shared keys,
    c2p|p2c, log buckets (position_buckets 4: distances from 2 on are bucketed, from 8 on clipped, and
    the batch is longer), norm_rel_ebd layer_norm, the lm_predictions head of the released files.
    Weights of std 0.2 (not 0.02), so that the paper's index would move the logits by far more than 1e-4."""
    import transformers as tf
    common = dict(vocab_size=V, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
                  max_position_embeddings=40, relative_attention=True, pos_att_type="c2p|p2c", hidden_act="gelu",
                  type_vocab_size=0, pad_token_id=0, initializer_range=0.2)   # 0.2: the relative terms weigh
    if name == "deberta":
        cfg = tf.DebertaConfig(**common, max_relative_positions=6, position_biased_input=True, embedding_size=16,
                               legacy=True)
        return tf.DebertaForMaskedLM(cfg)
    cfg = tf.DebertaV2Config(**common, max_relative_positions=8, position_buckets=4, share_att_key=True,
                             norm_rel_ebd="layer_norm", position_biased_input=False, legacy=False)
    return tf.DebertaV2ForMaskedLM(cfg)


# ---- models --------------------------------------------------------------------------------------

def tiny(name: str, V: int, tok):
    """(model, needs_decoder) for fixture ``name`` with vocabulary size V."""
    import transformers as tf
    enc = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
               max_position_embeddings=40, vocab_size=V)
    if name == "gpt2":
        return tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=V, n_positions=32, n_embd=32, n_layer=2, n_head=4,
                                                n_inner=64, bos_token_id=tok.eos_token_id,
                                                eos_token_id=tok.eos_token_id)), False
    if name == "bert":
        return tf.BertForMaskedLM(tf.BertConfig(**enc)), False
    if name == "roberta":
        cfg = tf.RobertaConfig(**{**enc, "max_position_embeddings": 42}, type_vocab_size=1, pad_token_id=1,
                               bos_token_id=0, eos_token_id=2, layer_norm_eps=1e-5)
        return tf.RobertaForMaskedLM(cfg), False
    if name == "distilbert":
        cfg = tf.DistilBertConfig(vocab_size=V, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                                  max_position_embeddings=40)
        return tf.DistilBertForMaskedLM(cfg), False
    if name == "electra-discriminator":
        return tf.ElectraForPreTraining(tf.ElectraConfig(**enc, embedding_size=16)), False
    if name == "electra-generator":
        cfg = tf.ElectraConfig(**{**enc, "hidden_size": 16, "num_attention_heads": 2}, embedding_size=8)
        return tf.ElectraForMaskedLM(cfg), False
    if name == "bart":
        cfg = tf.BartConfig(vocab_size=V, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                            decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                            max_position_embeddings=40, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                            decoder_start_token_id=2, forced_eos_token_id=None)
        return tf.BartForConditionalGeneration(cfg), True
    if name == "t5":
        cfg = tf.T5Config(vocab_size=V, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                          feed_forward_proj="relu", tie_word_embeddings=True, decoder_start_token_id=0,
                          relative_attention_num_buckets=8, relative_attention_max_distance=16)
        return tf.T5ForConditionalGeneration(cfg), True
    if name == "t5-v1_1":
        cfg = tf.T5Config(vocab_size=V, d_model=32, d_kv=16, d_ff=48, num_layers=2, num_decoder_layers=1,
                          num_heads=4, feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                          decoder_start_token_id=0, relative_attention_num_buckets=8,
                          relative_attention_max_distance=16)
        return tf.T5ForConditionalGeneration(cfg), True
    if name == "xlnet":
        cfg = tf.XLNetConfig(vocab_size=V, d_model=16, n_layer=2, n_head=2, d_inner=32, ff_activation="gelu",
                             mem_len=None, pad_token_id=tok.pad_token_id, bos_token_id=1, eos_token_id=2)
        return tf.XLNetLMHeadModel(cfg), False
    if name in ("deberta", "deberta-v2"):
        return tiny_deberta(name, V), False
    raise ValueError(name)


FIXTURES = {  # name → tokenizer kind
    "gpt2": "gpt2", "bert": "wordpiece", "roberta": "roberta", "distilbert": "wordpiece",
    "electra-discriminator": "wordpiece", "electra-generator": "wordpiece", "bart": "bart",
    "t5": "t5", "t5-v1_1": "t5", "xlnet": "xlnet", "deberta": "deberta", "deberta-v2": "deberta-v2",
}


FIXTURES_ORDER = list(FIXTURES)
LINE_TOKENIZERS = ("gpt2", "bert", "roberta", "bart", "t5")   # one fixture of each tokenizer kind
STDLIB = ("json", "re", "collections", "functools", "itertools", "pathlib", "textwrap", "string", "argparse",
          "unicodedata", "inspect", "typing", "dataclasses", "statistics", "fractions", "decimal")
HARD = ["", " ", "   leading and trailing   ", "tabs\tand\nnewlines\r\n", "東京都 北京 서울",
        "emoji 🙂👍🏽 family 👨\u200d👩\u200d👧", "e\u0301 combining n\u0303", "Ünïcödé ÀÉÎ",
        "[CLS] [MASK] <mask> <s></s>", "a<mask>b", "   <mask>   x", "don't  we'll   I'M", "x" * 150,
        "1234567890 3.14159 1e-5"]


def docstring_lines(n: int = 500) -> list[str]:
    """The first ``n`` distinct non-blank lines of some standard-library docstrings (real English
    with code, punctuation and odd spacing), then the hard cases."""
    import importlib
    import inspect
    lines = []
    for name in STDLIB:
        for _, obj in inspect.getmembers(importlib.import_module(name)):
            lines += [line for line in (inspect.getdoc(obj) or "").splitlines() if line.strip()]
    return list(dict.fromkeys(lines))[:n] + HARD


def write_lines(out: Path, texts: list[str]) -> None:
    """lines.npz: the texts and, per tokenizer, the ids of each (concatenated, with offsets)."""
    import transformers as tf
    arrays = {"texts": np.array(texts)}
    for name in LINE_TOKENIZERS:
        tok = tf.AutoTokenizer.from_pretrained(out / name)
        ids = [tok(t)["input_ids"] for t in texts]
        arrays[f"{name}_ids"] = np.array([i for row in ids for i in row], dtype=np.int32)
        arrays[f"{name}_offsets"] = np.cumsum([0] + [len(row) for row in ids]).astype(np.int64)
    np.savez_compressed(out / "lines.npz", **arrays)


def perturb(model, seed: int) -> None:
    """N(0, 0.05²) noise on every parameter and on BART's final_logits_bias (a buffer)."""
    import torch
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 0.05)
        if hasattr(model, "final_logits_bias"):
            model.final_logits_bias.copy_(torch.randn(model.final_logits_bias.shape, generator=g) * 0.5)


def build(name: str, directory: Path, seed: int) -> dict:
    """Write fixture ``name`` into ``directory``; returns the arrays of expected.npz."""
    import torch
    torch.manual_seed(seed)
    tok = make_tokenizer(FIXTURES[name])
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model, seq2seq = tiny(name, len(tok), tok)
    perturb(model, seed)
    model.eval()
    batch = tok(TEXTS, padding=True, return_tensors="pt")
    arrays = {"input_ids": batch["input_ids"].numpy().astype(np.int64),
              "attention_mask": batch["attention_mask"].numpy().astype(np.int64)}
    kwargs = dict(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    if seq2seq:
        target = tok([TARGETS[i % len(TARGETS)] for i in range(len(TEXTS))], padding=True)["input_ids"]
        start = model.config.decoder_start_token_id
        dec = np.array([[start] + row[:-1] for row in target], dtype=np.int64)
        arrays["decoder_input_ids"] = dec
        kwargs["decoder_input_ids"] = torch.tensor(dec)
    with torch.no_grad():
        arrays["logits"] = model(**kwargs).logits.numpy().astype(np.float32)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory, safe_serialization=True)
    tok.save_pretrained(directory)
    tokens = {"texts": TOKEN_TEXTS, "input_ids": [tok(t)["input_ids"] for t in TOKEN_TEXTS],
              "transformers": __import__("transformers").__version__, "class": type(model).__name__}
    (directory / "tokens.json").write_text(json.dumps(tokens, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if name == "xlnet":   # the two streams: a factorisation order, three targets a row, segments
        types = tok(TEXTS, padding=True, return_token_type_ids=True)["token_type_ids"]   # <cls> 2, <pad> 3
        arrays.update(xlnet_two_stream_inputs(arrays, np.array(types)))
        with torch.no_grad():
            arrays["logits_two_stream"] = model(**xlnet_kwargs(arrays)).logits.numpy().astype(np.float32)
        write_xlnet_lines(tok, directory)
    if name in ("deberta", "deberta-v2"):   # line_ids.npz: BPE / Unigram ids of the 514 lines + NFKC cases
        write_xlnet_lines(tok, directory)
    np.savez_compressed(directory / "expected.npz", **arrays)
    return arrays


def check(name: str, directory: Path) -> tuple[float, bool]:
    """(max |stored − recomputed| logits, tokenizer ids identical) for the stored fixture ``name``."""
    import torch
    import transformers as tf
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    cls = getattr(tf, config["architectures"][0])
    model = cls.from_pretrained(directory).eval()
    tok = tf.AutoTokenizer.from_pretrained(directory)
    with np.load(directory / "expected.npz", allow_pickle=False) as stored:
        arrays = dict(stored)
    kwargs = {k: torch.tensor(arrays[k]) for k in ("input_ids", "attention_mask", "decoder_input_ids") if k in arrays}
    with torch.no_grad():
        logits = model(**kwargs).logits.numpy()
    tokens = json.loads((directory / "tokens.json").read_text(encoding="utf-8"))
    same = [tok(t)["input_ids"] for t in tokens["texts"]] == tokens["input_ids"]
    if "logits_two_stream" in arrays:
        with torch.no_grad():
            two = model(**xlnet_kwargs(arrays)).logits.numpy()
        logits = np.concatenate([logits.ravel(), two.ravel()])
        arrays["logits"] = np.concatenate([arrays["logits"].ravel(), arrays["logits_two_stream"].ravel()])
        same = same and xlnet_lines_match(directory)
    return float(np.abs(logits - arrays["logits"]).max()), same


def export_check(tmp: Path) -> dict[str, float]:
    """minilm → ``export`` → transformers: {model: max |Δ logits|} for a BART with minilm's own
    layout (positions from row 0, tanh GELU), T5 v1.0 / v1.1 and XLNetReleased, random weights, a padded batch.
    Imports minilm (so numba must be installed where this runs)."""
    import torch
    import transformers as tf
    sys.path.insert(0, str(ROOT))
    from minilm.pretrained import export, hf_logits
    from minilm.models.bart import Bart, BartConfig
    from minilm.models.t5 import T5, T5Config
    rng = np.random.default_rng(3)
    models = {
        "bart": Bart(BartConfig(vocab_size=50, n_embd=16, n_head=2, n_layer=2, n_decoder_layer=1, max_positions=20),
                     rng=rng),
        "t5": T5(T5Config(vocab_size=50, n_embd=16, n_head=2, n_layer=1, num_buckets=8, max_distance=16), rng=rng),
        "t5-v1_1": T5(T5Config(vocab_size=50, n_embd=16, n_head=2, n_layer=2, n_decoder_layer=1, num_buckets=8,
                               max_distance=16, ffn="gated-gelu", d_kv=12, tie_word_embeddings=False), rng=rng)}
    ids = np.array([[5, 6, 7, 8, 3], [9, 10, 3, 0, 0]])
    mask = (ids != 0).astype(np.int64)
    dec = np.array([[3, 11, 12], [3, 13, 14]])
    out = {}
    for name, model in models.items():
        for p in model.parameters():
            p.data += rng.normal(0, 0.05, p.shape).astype(p.data.dtype)
        model.eval()
        ours = hf_logits(model, ids, mask, dec)
        folder = export(model, tmp / name)
        cls = getattr(tf, json.loads((folder / "config.json").read_text())["architectures"][0])
        theirs = cls.from_pretrained(folder).eval()
        with torch.no_grad():
            logits = theirs(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask),
                            decoder_input_ids=torch.tensor(dec)).logits.numpy()
        out[name] = float(np.abs(logits - ours).max())
    out["xlnet"] = xlnet_export_check(tmp, ids, mask, rng)
    return out


def xlnet_export_check(tmp: Path, ids, mask, rng) -> float:
    """A random XLNetReleased (clamped distances, tanh GELU) → export → ``AutoModelForCausalLM``."""
    import torch
    import transformers as tf
    from minilm.models.xlnet_released import XLNetReleased, XLNetReleasedConfig
    from minilm.pretrained import export, hf_logits
    model = XLNetReleased(XLNetReleasedConfig(vocab_size=50, n_embd=16, n_layer=2, n_head=2, n_inner=24, clamp_len=3,
                                              activation="gelu"), rng=rng)
    for p in model.parameters():
        p.data += rng.normal(0, 0.05, p.shape).astype(p.data.dtype)
    ours = hf_logits(model.eval(), ids, mask)
    theirs = tf.AutoModelForCausalLM.from_pretrained(export(model, tmp / "xlnet")).eval()
    with torch.no_grad():
        logits = theirs(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask)).logits.numpy()
    return float(np.abs(logits - ours).max())


# ---- derived folders: sharded, legacy names (minilm's writer; no torch) --------------------------------

SHARDED = {"bert": 3, "gpt2": 2}   # fixture → the shards of its copy "<name>-sharded"
LEGACY = {"bert": "bert-legacy-names"}
COPIED = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json")


def _minilm_safetensors():
    sys.path.insert(0, str(ROOT))
    from minilm.pretrained.safetensors_file import read_safetensors, write_safetensors
    return read_safetensors, write_safetensors


def _copy_folder_files(source: Path, target: Path) -> None:
    """A fresh ``target`` with ``source``'s config and tokenizer files (the weights are written apart)."""
    import shutil
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name in COPIED:
        if (source / name).is_file():
            shutil.copy(source / name, target / name)


def shard_folder(source: Path, target: Path, n: int) -> Path:
    """``source`` with its model.safetensors split into ``n`` shards as transformers' save_pretrained
    splits a large checkpoint (``model-0000i-of-0000n.safetensors`` + ``model.safetensors.index.json``
    with transformers 5's keys): tests/models/checkpoint_variants.py writes it."""
    sys.path.insert(0, str(ROOT / "tests" / "models"))
    from checkpoint_variants import write_variant
    return write_variant(source, target, "F32", n)


def legacy_folder(source: Path, target: Path) -> Path:
    """``source`` with every LayerNorm's ``weight`` / ``bias`` named ``gamma`` / ``beta``, as in the
    original bert-base-* files: the inverse of the renaming minilm and transformers apply on load."""
    read_safetensors, write_safetensors = _minilm_safetensors()
    from minilm.pretrained.weights import LEGACY_NAMES
    back = {now: old for old, now in LEGACY_NAMES.items()}
    arrays, metadata = read_safetensors(source / "model.safetensors")
    _copy_folder_files(source, target)
    renamed = {next((k[:-len(now)] + old for now, old in back.items() if k.endswith(now)), k): v
               for k, v in arrays.items()}
    write_safetensors(target / "model.safetensors", renamed, metadata)
    return target


def derived_folders(out: Path) -> dict[str, Path]:
    """{folder name: source fixture} of the derived folders, written into ``out`` from the stored fixtures."""
    made = {}
    for name, n in SHARDED.items():
        made[shard_folder(out / name, out / f"{name}-sharded", n).name] = out / name
    for name, folder in LEGACY.items():
        made[legacy_folder(out / name, out / folder).name] = out / name
    return made


def check_derived(out: Path) -> dict[str, float]:
    """{derived folder: max |Δ logits|} of transformers on each derived folder against its source's expected.npz."""
    import torch
    import transformers as tf
    diffs = {}
    for folder, source in [(f"{n}-sharded", n) for n in SHARDED] + [(f, n) for n, f in LEGACY.items()]:
        config = json.loads((out / folder / "config.json").read_text(encoding="utf-8"))
        model = getattr(tf, config["architectures"][0]).from_pretrained(out / folder).eval()
        with np.load(out / source / "expected.npz", allow_pickle=False) as f:
            e = dict(f)
        with torch.no_grad():
            logits = model(input_ids=torch.tensor(e["input_ids"]),
                           attention_mask=torch.tensor(e["attention_mask"])).logits.numpy()
        diffs[folder] = float(np.abs(logits - e["logits"]).max())
    return diffs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="rebuild in a temporary folder and compare")
    ap.add_argument("--only", nargs="*", default=None, help="fixture names (default: all)")
    ap.add_argument("--export-check", action="store_true",
                    help="only: export minilm BART/T5 models and compare transformers' logits (needs numba too)")
    ap.add_argument("--derived", action="store_true",
                    help="only: write the sharded and legacy-named copies of the stored fixtures (no torch)")
    args = ap.parse_args(argv)
    if args.derived:
        for folder in derived_folders(args.out):
            size = sum(p.stat().st_size for p in (args.out / folder).iterdir())
            print(f"{folder}: {args.out / folder} ({size / 1024:.0f} KiB)")
        return 0
    if args.export_check:
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            diffs = export_check(Path(tmp))
        for name, diff in diffs.items():
            print(f"export {name} → transformers: max |Δ logits| {diff:.2e}")
        return 0 if max(diffs.values()) < 1e-4 else 1
    names = args.only or list(FIXTURES)
    ok = True
    for i, name in enumerate(names):
        target = args.out / name
        if args.check:
            diff, same = check(name, target)
            ok = ok and diff < 1e-5 and same
            print(f"{name}: transformers' logits differ from the stored ones by {diff:.2e}; ids "
                  f"{'identical' if same else 'DIFFER'}")
        else:
            arrays = build(name, target, seed=17 + FIXTURES_ORDER.index(name))
            size = sum(p.stat().st_size for p in target.iterdir())
            print(f"{name}: {target} ({size / 1024:.0f} KiB), logits {arrays['logits'].shape}")
    if args.only is None:   # the line-by-line tokenizer comparison
        if args.check:
            with np.load(args.out / "lines.npz", allow_pickle=False) as f:
                stored = dict(f)
            same = lines_match(args.out, stored)
            ok = ok and same
            print(f"lines.npz: {len(stored['texts'])} lines, ids {'identical' if same else 'DIFFER'}")
            same = spm_match(args.out)
            ok = ok and same
            print(f"spm/: ids {'identical' if same else 'DIFFER'}")
            for folder, diff in check_derived(args.out).items():
                ok = ok and diff < 1e-5
                print(f"{folder}: transformers' logits differ from the source's stored ones by {diff:.2e}")
        else:
            write_lines(args.out, docstring_lines())
            print(f"lines.npz: {(args.out / 'lines.npz').stat().st_size / 1024:.0f} KiB")
            write_spm(args.out)
            print(f"spm/: {sum(p.stat().st_size for p in (args.out / 'spm').iterdir()) / 1024:.0f} KiB")
            derived_folders(args.out)
    return 0 if ok else 1


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


def lines_match(out: Path, stored: dict) -> bool:
    import transformers as tf
    texts = [str(t) for t in stored["texts"]]
    for name in LINE_TOKENIZERS:
        tok = tf.AutoTokenizer.from_pretrained(out / name)
        ids, off = stored[f"{name}_ids"], stored[f"{name}_offsets"]
        if any(tok(t)["input_ids"] != ids[off[k]:off[k + 1]].tolist() for k, t in enumerate(texts)):
            return False
    return True


# ---- XLNet: the two streams and the tokenizer's lines ----------------------------------------------

def xlnet_two_stream_inputs(arrays: dict, token_type_ids: np.ndarray) -> dict:
    """A fixed factorisation order per row (a seeded permutation of the real tokens), ``perm_mask``
    (i may not see j when j comes at or after i in the order), ``target_mapping`` (the last three
    tokens of the order, one-hot rows) and the tokenizer's ``token_type_ids``."""
    rng = np.random.default_rng(0)
    ids, mask = arrays["input_ids"], arrays["attention_mask"]
    B, T = ids.shape
    perm = np.zeros((B, T, T), dtype=np.float32)
    targets = np.zeros((B, 3, T), dtype=np.float32)
    for b in range(B):
        real = np.flatnonzero(mask[b])
        order = rng.permutation(real)
        rank = np.full(T, -1)
        rank[order] = np.arange(len(order))
        perm[b] = (rank[None, :] >= rank[:, None]) & (rank[None, :] >= 0)
        targets[b, np.arange(3), order[-3:]] = 1.0
    return {"perm_mask": perm, "target_mapping": targets, "token_type_ids": token_type_ids.astype(np.int64)}


def xlnet_kwargs(arrays: dict) -> dict:
    import torch
    return {k: torch.tensor(arrays[k]) for k in ("input_ids", "attention_mask", "perm_mask", "target_mapping",
                                                  "token_type_ids")}


def write_xlnet_lines(tok, directory: Path) -> None:
    """line_ids.npz: the ids of lines.npz's texts plus the NFKC cases (concatenated, with offsets)."""
    ids = [tok(t)["input_ids"] for t in spm_texts(directory.parent)]
    np.savez_compressed(directory / "line_ids.npz", ids=np.array([i for row in ids for i in row], dtype=np.int32),
                        offsets=np.cumsum([0] + [len(row) for row in ids]).astype(np.int64))


def xlnet_lines_match(directory: Path) -> bool:
    import transformers as tf
    tok = tf.AutoTokenizer.from_pretrained(directory)
    with np.load(directory / "line_ids.npz", allow_pickle=False) as f:
        ids, off = f["ids"], f["offsets"]
    texts = spm_texts(directory.parent)
    return all(tok(t)["input_ids"] == ids[off[k]:off[k + 1]].tolist() for k, t in enumerate(texts))


if __name__ == "__main__":
    sys.exit(main())
