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

Derived folders, the layouts the hub serves (``--derived``, and after every full build; no torch):
``bert-sharded/``, ``gpt2-sharded/`` and ``bert-legacy-names/``; ``--check`` loads them in transformers too.

The tool is this file and its parts beside it (tools/ is no package: each part is imported by its
name, as tools/ is on the path whenever this tool runs or is imported); the names that other tools
and the tests use are reachable here (``__all__``):

* make_hf_fixtures_vocab.py — the tokenizers, one per kind, trained on ``CORPUS``;
* make_hf_fixtures_lines.py — lines.npz: 514 lines and each tokenizer kind's ids;
* make_hf_fixtures_spm.py — spm/: SentencePiece's normaliser, and the NFKC cases;
* make_hf_fixtures_xlnet.py — XLNet's two streams and the folders' ``line_ids.npz``;
* make_hf_fixtures_export.py — ``--export-check``: minilm → ``export`` → transformers;
* make_hf_fixtures_derived.py — ``--derived``: the sharded and legacy-named layouts.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from make_hf_fixtures_derived import check_derived, derived_folders, shard_folder
from make_hf_fixtures_export import export_check, xlnet_export_check
from make_hf_fixtures_lines import docstring_lines, lines_match, write_lines
from make_hf_fixtures_spm import NFKC_CASES, spm_match, write_spm
from make_hf_fixtures_vocab import (CORPUS, XLNET_RULES, bpe_vocab_merges, deberta_tokenizer, make_tokenizer,
                                    wordpiece_vocab, xlnet_tokenizer)
from make_hf_fixtures_xlnet import write_xlnet_lines, xlnet_kwargs, xlnet_lines_match, xlnet_two_stream_inputs

__all__ = [  # this file's names, and the parts' names that other tools and the tests reach through it
    "ROOT", "OUT", "TEXTS", "TOKEN_TEXTS", "TARGETS", "FIXTURES", "FIXTURES_ORDER", "tiny", "tiny_deberta",
    "perturb", "build", "check", "main",
    "CORPUS", "XLNET_RULES", "bpe_vocab_merges", "deberta_tokenizer", "wordpiece_vocab", "xlnet_tokenizer",
    "docstring_lines", "lines_match", "NFKC_CASES", "spm_match", "xlnet_lines_match", "export_check",
    "xlnet_export_check", "shard_folder", "derived_folders", "check_derived",
]

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "hf"

TEXTS = ["Bert knows Snuffleupagus", "the cats eat fish.", "Hello world! The lazy dog sleeps today."]
TOKEN_TEXTS = TEXTS + ["Hello  world", "New York, Los Angeles; and the <mask> here.", "",
                       "  naïve Café, 東京 🙂\tdone  ", "don't stop—it's 3.14!"]
TARGETS = ["cats eat fish", "a dog"]


# ---- models --------------------------------------------------------------------------------------

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


if __name__ == "__main__":
    sys.exit(main())
