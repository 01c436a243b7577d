"""Build tests/data/course/: the course's own checkpoints in miniature, one folder per public
checkpoint that docs/pretrained.md names (bert-base-cased, roberta-base, …, gpt2).

    pip install torch==2.13.0 transformers sentencepiece protobuf    # this tool only; never at run time
    python tools/make_course_fixtures.py [--only NAME …]   # build (writes tests/data/course/)
    python tools/make_course_fixtures.py --check           # re-derive everything with transformers

Each miniature is what a student downloads, shrunk: the hub's ``config.json`` field for field
(``course_configs.py``) with only the sizes changed; the parameter names of the hub's file (BERT's
``LayerNorm.gamma`` / ``beta`` and its pooler and NSP head; GPT-2's names without ``transformer.`` and
its ``attn.bias`` mask buffers; BART's headless ``BartModel`` without ``final_logits_bias``;
DeBERTa's ``lm_predictions.*`` and v3's ``mask_predictions.*``); the hub's tokenizer files
(``vocab.txt`` + ``tokenizer.json``; ``vocab.json`` + ``merges.txt``; ``spiece.model`` / ``spm.model``
— DeBERTa's without a ``tokenizer.json``). Weights are transformers' init plus N(0, 0.05²) noise.

Beside the folder, ``expected.npz`` (allow_pickle=False): a right-padded batch (``input_ids``,
``attention_mask``, for encoder–decoders ``decoder_input_ids``) and the logits transformers computes
from the folder: ``logits_F32``, and ``logits_F16`` / ``logits_BF16`` from the same folder re-saved in
half precision by tests/models/checkpoint_variants.py (which also shards it); ``tokens.json``: texts
and the ids transformers' AutoTokenizer gives. ``--check`` loads every stored folder and every
variant (3 dtypes × one file or 2 shards) in transformers again and compares.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "course"
sys.path[:0] = [str(ROOT), str(ROOT / "tools"), str(ROOT / "tests" / "models")]

from checkpoint_variants import DTYPES, write_variant  # noqa: E402
from course_configs import CONFIGS, SHRINK  # noqa: E402
from make_hf_fixtures import (CORPUS, TARGETS, TEXTS, TOKEN_TEXTS, XLNET_RULES, bpe_vocab_merges,  # noqa: E402
                              deberta_tokenizer, docstring_lines, perturb, wordpiece_vocab, xlnet_tokenizer)

from minilm.pretrained.safetensors_file import read_safetensors, write_safetensors  # noqa: E402

# checkpoint → (tokenizer kind, the tokenizer files of its hub folder, the class whose weights it holds)
COURSE = {
    "bert-base-cased": ("wordpiece-cased", ("vocab.txt", "tokenizer.json", "tokenizer_config.json"),
                        "BertForPreTraining"),
    "roberta-base": ("roberta", ("vocab.json", "merges.txt", "tokenizer.json"), "RobertaForMaskedLM"),
    "distilbert-base-uncased": ("wordpiece", ("vocab.txt", "tokenizer.json", "tokenizer_config.json"),
                                "DistilBertForMaskedLM"),
    "google/electra-small-discriminator": ("wordpiece", ("vocab.txt", "tokenizer.json", "tokenizer_config.json"),
                                           "ElectraForPreTraining"),
    "google/electra-small-generator": ("wordpiece", ("vocab.txt", "tokenizer.json", "tokenizer_config.json"),
                                       "ElectraForMaskedLM"),
    "t5-small": ("t5", ("spiece.model", "tokenizer.json"), "T5ForConditionalGeneration"),
    "google/flan-t5-small": ("t5", ("spiece.model", "tokenizer.json", "tokenizer_config.json"),
                             "T5ForConditionalGeneration"),
    "facebook/bart-base": ("bart", ("vocab.json", "merges.txt", "tokenizer.json"), "BartModel"),
    "microsoft/deberta-base": ("deberta", ("vocab.json", "merges.txt", "tokenizer_config.json"),
                               "DebertaForMaskedLM"),
    "microsoft/deberta-v3-small": ("deberta-v3", ("spm.model", "tokenizer_config.json"), "DebertaV2ForMaskedLM"),
    "xlnet-base-cased": ("xlnet", ("spiece.model", "tokenizer.json"), "XLNetLMHeadModel"),
    "gpt2": ("gpt2", ("vocab.json", "merges.txt", "tokenizer.json"), "GPT2LMHeadModel"),
}
# the hub's tokenizer_config.json where it is not what transformers 5 writes (sizes shrunk: extra_ids)
_EXTRA = [f"<extra_id_{i}>" for i in range(4)]
TOKENIZER_CONFIGS = {
    "bert-base-cased": {"do_lower_case": False, "model_max_length": 512},
    "distilbert-base-uncased": {"do_lower_case": True, "model_max_length": 512},
    "google/electra-small-discriminator": {"do_lower_case": True},
    "google/electra-small-generator": {"do_lower_case": True},
    "google/flan-t5-small": {"additional_special_tokens": _EXTRA, "eos_token": "</s>", "extra_ids": 4,
                             "model_max_length": 512, "name_or_path": "google/t5-v1_1-small", "pad_token": "<pad>",
                             "sp_model_kwargs": {}, "tokenizer_class": "T5Tokenizer", "unk_token": "<unk>"},
    "microsoft/deberta-base": {"do_lower_case": False, "vocab_type": "gpt2"},
    "microsoft/deberta-v3-small": {"do_lower_case": False, "vocab_type": "spm"},
}
# the class a course user loads for logits, where the folder's own class has none
LOGITS_CLASS = {"facebook/bart-base": "BartForConditionalGeneration"}
SEQ2SEQ = ("t5-small", "google/flan-t5-small", "facebook/bart-base")


def folder_name(checkpoint: str) -> str:
    return checkpoint.replace("/", "--")     # the hub cache's spelling of an organisation's repository


# ---- tokenizers ----------------------------------------------------------------------------------

def _train_spm(tmp: Path, name: str, **ids) -> Path:
    import sentencepiece as spm
    corpus = tmp / "corpus.txt"
    corpus.write_text("\n".join(CORPUS * 5 + docstring_lines()[:300]), encoding="utf-8")
    # a few normalisation rules, so that the model carries a small Precompiled charsmap (the hub's
    # nmt_nfkc one is ~240 KB, and tests/data/hf/spm/ has it already)
    rules = tmp / "rules.tsv"
    rules.write_text("".join(f"{a}\t{b}\n" for a, b in XLNET_RULES.items()), encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp / name), vocab_size=150,
                                   model_type="unigram", character_coverage=1.0, minloglevel=2, num_threads=1,
                                   normalization_rule_tsv=str(rules), **ids)
    return tmp / f"{name}.model"


def tokenizer(kind: str, tmp: Path):
    """(transformers tokenizer, {file name: path of a SentencePiece model to copy})."""
    import transformers as tf
    from tokenizers import AddedToken
    if kind in ("wordpiece", "wordpiece-cased"):
        cased = kind.endswith("cased")
        vocab = wordpiece_vocab(180, lowercase=False) if cased else wordpiece_vocab()
        return tf.BertTokenizer(vocab=vocab, do_lower_case=not cased), {}
    if kind in ("roberta", "bart"):
        vocab, merges = bpe_vocab_merges(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
        cls = tf.RobertaTokenizer if kind == "roberta" else tf.BartTokenizer
        return cls(vocab=vocab, merges=merges, mask_token=AddedToken("<mask>", lstrip=True)), {}
    if kind == "gpt2":
        vocab, merges = bpe_vocab_merges(["<|endoftext|>"])
        return tf.GPT2Tokenizer(vocab=vocab, merges=merges), {}
    if kind == "deberta":
        return deberta_tokenizer("deberta"), {}
    if kind == "t5":   # t5-small's ids: <pad> 0, </s> 1, <unk> 2, no <s>
        model = _train_spm(tmp, "spiece", pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
        return tf.T5Tokenizer.from_pretrained(tmp, extra_ids=4), {"spiece.model": model}
    if kind == "deberta-v3":  # deberta-v3's spm.model: [PAD] 0, [CLS] 1, [SEP] 2, [UNK] 3; [MASK] added
        model = _train_spm(tmp, "spm", pad_id=0, bos_id=1, eos_id=2, unk_id=3, pad_piece="[PAD]",
                           bos_piece="[CLS]", eos_piece="[SEP]", unk_piece="[UNK]")
        return tf.DebertaV2Tokenizer.from_pretrained(tmp), {"spm.model": model}
    if kind == "xlnet":
        return xlnet_tokenizer(keep=tmp / "xspiece.model"), {"spiece.model": tmp / "xspiece.model"}
    raise ValueError(kind)


def write_tokenizer(tok, spm_files: dict, files: tuple, directory: Path, tmp: Path, config: dict | None) -> None:
    """The hub folder's tokenizer files, and only those (``config``: its tokenizer_config.json)."""
    import shutil
    saved = tmp / "tok"
    tok.save_pretrained(saved)
    spec = json.loads((saved / "tokenizer.json").read_text(encoding="utf-8"))
    for name in files:
        if name == "tokenizer_config.json" and config is not None:
            (directory / name).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        elif name in spm_files:
            shutil.copy(spm_files[name], directory / name)
        elif (saved / name).is_file():
            shutil.copy(saved / name, directory / name)
        elif name == "vocab.txt":
            vocab = spec["model"]["vocab"]
            (directory / name).write_text("".join(t + "\n" for t in sorted(vocab, key=vocab.get)), encoding="utf-8")
        elif name == "vocab.json":
            (directory / name).write_text(json.dumps(spec["model"]["vocab"], ensure_ascii=False), encoding="utf-8")
        elif name == "merges.txt":
            merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
            (directory / name).write_text("#version: 0.2\n" + "".join(m + "\n" for m in merges), encoding="utf-8")
        else:
            raise FileNotFoundError(f"{name}: the tokenizer of {directory.name} has no such file")


# ---- models --------------------------------------------------------------------------------------

def config_for(checkpoint: str, tok) -> dict:
    """The hub's config with the sizes shrunk and the vocabulary the miniature tokenizer's."""
    config = {**CONFIGS[checkpoint], **SHRINK[checkpoint]}
    V = len(tok)
    if checkpoint.startswith(("t5", "google/flan")):
        V += -V % 16      # t5-small's table is larger than its tokenizer (32128 rows, 32100 tokens)
    config["vocab_size"] = V
    if checkpoint == "gpt2":
        config["bos_token_id"] = config["eos_token_id"] = tok.eos_token_id
    return config


def rename(checkpoint: str, arrays: dict, config: dict, rng) -> dict:
    """transformers' names → the names in the hub's file."""
    if checkpoint == "bert-base-cased":      # the original TF conversion's LayerNorm names
        return {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
                for k, v in arrays.items()}
    if checkpoint == "gpt2":                 # no base-model prefix, and the causal-mask buffers
        out = {k.removeprefix("transformer."): v for k, v in arrays.items() if k != "lm_head.weight"}
        P = config["n_positions"]
        for i in range(config["n_layer"]):
            out[f"h.{i}.attn.bias"] = np.tril(np.ones((P, P), np.float32))[None, None]
        return out
    if checkpoint == "microsoft/deberta-v3-small":   # the replaced-token-detection head of the RTD training
        H = config["hidden_size"]
        extra = {"mask_predictions.dense.weight": (H, H), "mask_predictions.dense.bias": (H,),
                 "mask_predictions.LayerNorm.weight": (H,), "mask_predictions.LayerNorm.bias": (H,),
                 "mask_predictions.classifier.weight": (1, H), "mask_predictions.classifier.bias": (1,)}
        return {**arrays, **{k: rng.normal(0, 0.05, s).astype(np.float32) for k, s in extra.items()}}
    return arrays


def logits_of(checkpoint: str, directory: Path, batch: dict) -> np.ndarray:
    import torch
    import transformers as tf
    name = LOGITS_CLASS.get(checkpoint, COURSE[checkpoint][2].replace("ForPreTraining", "ForMaskedLM")
                            if checkpoint == "bert-base-cased" else COURSE[checkpoint][2])
    extra = {"legacy": False} if "deberta" in checkpoint else {}   # the file's lm_predictions head
    model = getattr(tf, name).from_pretrained(directory, dtype=torch.float32, **extra).eval()
    with torch.no_grad():
        return model(**{k: torch.tensor(v) for k, v in batch.items()}).logits.numpy().astype(np.float32)


def batch_of(checkpoint: str, tok, config: dict) -> dict:
    """A right-padded batch of TEXTS (and shifted targets for the encoder–decoders)."""
    tok.padding_side = "right"
    if tok.pad_token is None:    # GPT-2 has none: pad with <|endoftext|>, as its users do
        tok.pad_token = tok.eos_token
    enc = tok(TEXTS, padding=True)
    batch = {"input_ids": np.array(enc["input_ids"], np.int64), "attention_mask": np.array(enc["attention_mask"],
                                                                                           np.int64)}
    if checkpoint in SEQ2SEQ:
        target = tok([TARGETS[i % len(TARGETS)] for i in range(len(TEXTS))], padding=True)["input_ids"]
        start = config["decoder_start_token_id"]
        batch["decoder_input_ids"] = np.array([[start] + row[:-1] for row in target], np.int64)
    return batch


def build(checkpoint: str, out: Path, seed: int) -> dict:
    import shutil

    import torch
    import transformers as tf
    torch.manual_seed(seed)
    directory = out / folder_name(checkpoint)
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    kind, files, cls_name = COURSE[checkpoint]
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        tok, spm_files = tokenizer(kind, tmp)
        config = config_for(checkpoint, tok)
        hf_config = tf.AutoConfig.for_model(**config)
        if "deberta" in checkpoint:
            hf_config.legacy = False
        model = getattr(tf, cls_name)(hf_config)
        perturb(model, seed)
        model.eval().save_pretrained(tmp / "model", safe_serialization=True)
        arrays, _ = read_safetensors(tmp / "model" / "model.safetensors")
        arrays = rename(checkpoint, arrays, config, np.random.default_rng(seed))
        write_safetensors(directory / "model.safetensors", arrays, {"format": "pt"})
        (directory / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        if checkpoint in SEQ2SEQ or checkpoint == "gpt2":
            (directory / "generation_config.json").write_text(json.dumps(
                generation_config(checkpoint, config), indent=2) + "\n", encoding="utf-8")
        write_tokenizer(tok, spm_files, files, directory, tmp, TOKENIZER_CONFIGS.get(checkpoint))
    arrays = expected(checkpoint, directory)
    if checkpoint != "facebook/bart-base":   # transformers read every renamed weight: the logits are the model's
        with torch.no_grad():
            out = model(**{k: torch.tensor(v) for k, v in _inputs(arrays).items()})
        mine = getattr(out, "logits", None)
        mine = out.prediction_logits if mine is None else mine
        gap = float(np.abs(mine.numpy() - arrays["logits_F32"]).max())
        assert gap < 1e-6, f"{checkpoint}: transformers reads the folder as another model (|Δ logits| {gap:.1e})"
    return arrays


def generation_config(checkpoint: str, config: dict) -> dict:
    """The hub's generation_config.json (the fields transformers derived from the model config)."""
    keys = ("bos_token_id", "decoder_start_token_id", "eos_token_id", "pad_token_id", "forced_bos_token_id",
            "forced_eos_token_id", "no_repeat_ngram_size", "num_beams", "early_stopping")
    return {"_from_model_config": True, **{k: config[k] for k in keys if k in config}}


def expected(checkpoint: str, directory: Path) -> dict:
    """expected.npz and tokens.json of a stored miniature, from transformers."""
    import transformers as tf
    tok = tf.AutoTokenizer.from_pretrained(directory)
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    arrays = batch_of(checkpoint, tok, config)
    arrays["logits_F32"] = logits_of(checkpoint, directory, arrays)
    with tempfile.TemporaryDirectory() as t:
        for dtype in DTYPES[1:]:
            arrays[f"logits_{dtype}"] = logits_of(checkpoint, write_variant(directory, Path(t) / dtype, dtype),
                                                  _inputs(arrays))
    np.savez_compressed(directory / "expected.npz", **arrays)
    tokens = {"checkpoint": checkpoint, "texts": TOKEN_TEXTS, "input_ids": [tok(t)["input_ids"] for t in TOKEN_TEXTS],
              "transformers": tf.__version__}
    (directory / "tokens.json").write_text(json.dumps(tokens, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return arrays


def _inputs(arrays: dict) -> dict:
    return {k: arrays[k] for k in ("input_ids", "attention_mask", "decoder_input_ids") if k in arrays}


def check(checkpoint: str, directory: Path) -> dict[str, float]:
    """{variant: max |stored − transformers| logits} over 3 dtypes × (one file, 2 shards); the stored
    token ids must be the ones transformers' AutoTokenizer gives from the folder's files."""
    import transformers as tf
    with np.load(directory / "expected.npz", allow_pickle=False) as f:
        stored = dict(f)
    tokens = json.loads((directory / "tokens.json").read_text(encoding="utf-8"))
    tok = tf.AutoTokenizer.from_pretrained(directory)
    assert [tok(t)["input_ids"] for t in tokens["texts"]] == tokens["input_ids"], f"{checkpoint}: token ids moved"
    out = {}
    with tempfile.TemporaryDirectory() as t:
        for dtype in DTYPES:
            for shards in (1, 2):
                folder = write_variant(directory, Path(t) / f"{dtype}-{shards}", dtype, shards)
                got = logits_of(checkpoint, folder, _inputs(stored))
                out[f"{dtype}x{shards}"] = float(np.abs(got - stored[f"logits_{dtype}"]).max())
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only", nargs="*", choices=list(COURSE), help="these checkpoints only")
    ap.add_argument("--check", action="store_true", help="re-derive the stored folders with transformers")
    args = ap.parse_args(argv)
    worst = 0.0
    for i, checkpoint in enumerate(args.only or COURSE):
        directory = args.out / folder_name(checkpoint)
        if not args.check:
            build(checkpoint, args.out, seed=100 + i)
        diffs = check(checkpoint, directory)
        worst = max(worst, *diffs.values())
        print(f"{checkpoint:38s} " + "  ".join(f"{k} {v:.1e}" for k, v in diffs.items()))
    print(f"largest |Δ logits| {worst:.1e}")
    return 0 if worst <= 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
