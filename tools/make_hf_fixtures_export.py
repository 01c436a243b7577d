"""``--export-check`` of tools/make_hf_fixtures.py: minilm's ``export`` read back by transformers.

Random minilm models (BART with minilm's own layout, T5 v1.0 and v1.1, XLNetReleased) → ``export`` →
transformers' ``from_pretrained``: the logits of a padded batch must agree (max |Δ logits| < 1e-4).
Imports minilm (so numba must be installed where this runs) as well as torch and transformers.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


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
