"""T5 (minilm/models/t5.py): shapes, causality, padding, the shared relative bias, no 1/√d, decoding."""
from __future__ import annotations

import numpy as np
import pytest

from autograd import Tensor, optim
from autograd.errors import ConfigError, ShapeError
from minilm.models.seq2seq import RMSNorm, shift_right
from minilm.models.t5 import T5, T5Config
from minilm.recipes.config import override

V, PAD, EOS = 40, 0, 1


def tiny(**kw):
    cfg = dict(vocab_size=V, n_embd=16, n_head=2, n_layer=2, pad_id=PAD, eos_id=EOS)
    cfg.update(kw)
    return T5(T5Config(**cfg), rng=np.random.default_rng(0))


SRC = np.array([[5, 6, 7, 8, EOS], [9, 10, 11, EOS, PAD]])
TGT = np.array([[12, 13, 14, EOS], [15, 16, EOS, -100]])


def test_shapes_and_loss():
    model = tiny()
    out = model(SRC, labels=TGT)
    assert out["logits"].shape == (2, 4, V)
    loss = out["loss"].item()
    assert np.isfinite(loss) and 0 < loss < 3 * np.log(V)
    out["loss"].backward()
    assert model.shared.weight.grad is not None and np.abs(model.shared.weight.grad).sum() > 0
    assert model(SRC, decoder_input_ids=shift_right(TGT, PAD, PAD))["loss"] is None


def test_shift_right_starts_with_pad():
    np.testing.assert_array_equal(shift_right(TGT, PAD, PAD), [[PAD, 12, 13, 14], [PAD, 15, 16, EOS]])
    labels = TGT.copy()
    shift_right(labels, PAD, PAD)
    np.testing.assert_array_equal(labels, TGT)  # not mutated


def test_loss_ignores_minus_100_and_pad():
    model = tiny()
    out = model(SRC, labels=TGT)
    logits = out["logits"].data
    valid = (TGT != -100) & (TGT != PAD)
    logp = logits - logits.max(-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
    expected = -logp[valid, TGT[valid]].mean()
    assert abs(out["loss"].item() - expected) < 1e-4
    padded = np.where(TGT == -100, PAD, TGT)                  # pad as the label: same loss
    assert abs(model(SRC, labels=padded)["loss"].item() - expected) < 1e-6


def test_decoder_is_causal_bit_for_bit():
    model = tiny()
    dec = np.array([[PAD, 12, 13, 14, 15, 16]])
    src = SRC[:1]
    base = model(src, decoder_input_ids=dec)["logits"].data
    for t in range(dec.shape[1] - 1):
        changed = dec.copy()
        changed[0, t + 1:] = 30                                # every token after t
        out = model(src, decoder_input_ids=changed)["logits"].data
        np.testing.assert_array_equal(out[0, :t + 1], base[0, :t + 1])
        assert not np.array_equal(out[0, t + 1:], base[0, t + 1:])


def test_source_padding_does_not_change_outputs():
    model = tiny()
    src = np.array([[5, 6, 7, EOS]])
    padded = np.array([[5, 6, 7, EOS, PAD, PAD, PAD]])
    dec = np.array([[PAD, 12, 13]])
    a = model(src, decoder_input_ids=dec)["logits"].data
    b = model(padded, decoder_input_ids=dec)["logits"].data
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    # the explicit attention_mask is used: marking the pads as real changes the output
    c = model(padded, decoder_input_ids=dec, attention_mask=np.ones(padded.shape, bool))["logits"].data
    assert np.abs(c - a).max() > 1e-4


def test_encoder_sees_both_directions():
    model = tiny()
    dec = np.array([[PAD, 12]])
    enc_a = model.encode(np.array([[5, 6, 7, EOS]])).data
    enc_b = model.encode(np.array([[5, 6, 9, EOS]])).data
    assert np.abs(enc_a[0, 0] - enc_b[0, 0]).max() > 1e-6    # position 0 sees the later token 2
    assert model(np.array([[5, 6, 7, EOS]]), decoder_input_ids=dec)["logits"].shape == (1, 2, V)


def test_one_relative_bias_table_per_stack_shared_by_all_layers():
    model = tiny(n_layer=3)
    tables = [n for n, _ in model.named_parameters() if "relative_attention_bias" in n]
    assert tables == ["encoder.relative_bias.relative_attention_bias.weight",
                      "decoder.relative_bias.relative_attention_bias.weight"]
    assert model.encoder.relative_bias.relative_attention_bias.weight.shape == (32, 2)
    assert model.encoder.relative_bias.bidirectional and not model.decoder.relative_bias.bidirectional
    seen = {"encoder": [], "decoder": []}
    for stack in ("encoder", "decoder"):
        for block in getattr(model, stack).blocks:
            def spy(x, *a, _f=block.forward, _s=stack, **kw):
                seen[_s].append(kw.get("bias"))
                return _f(x, *a, **kw)
            block.forward = spy
    model(SRC, labels=TGT)
    for stack, biases in seen.items():
        assert len(biases) == 3 and biases[0] is not None
        assert all(b is biases[0] for b in biases), f"{stack}: every layer must get the same bias tensor"
    # the table gets gradient from every layer through the one tensor
    model.zero_grad()
    model(SRC, labels=TGT)["loss"].backward()
    assert np.abs(model.encoder.relative_bias.relative_attention_bias.weight.grad).sum() > 0


def test_attention_scores_are_not_scaled():
    model = tiny()
    attns = [m for m in model.modules() if type(m).__name__ == "MultiHeadAttention"]
    assert attns and all(a.scale is False for a in attns)
    assert all(m.bias is None for m in model.modules() if type(m).__name__ == "Linear")
    # recompute the first encoder layer's attention weights by hand: softmax(q kᵀ + bias), no 1/√d
    src = np.array([[5, 6, 7, 8, EOS]])
    model.encode(src)
    block = model.encoder.blocks[0]
    x = model.shared.weight.data[src[0]]                        # (T, C)
    h = block.ln1(x[None]).data[0]
    H, d = 2, 8
    q = (h @ block.attn.q_proj.weight.data.T).reshape(-1, H, d).transpose(1, 0, 2)
    k = (h @ block.attn.k_proj.weight.data.T).reshape(-1, H, d).transpose(1, 0, 2)
    bias = model.encoder.relative_bias(5, 5).data[0]             # (H, T, T)
    scores = q @ k.transpose(0, 2, 1) + bias
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    np.testing.assert_allclose(block.attn.last_attention[0], probs, rtol=1e-4, atol=1e-6)


def test_rms_norm():
    norm = RMSNorm(4, eps=0.0)
    x = np.array([[1.0, -2.0, 3.0, -4.0]], dtype=np.float32)
    y = norm(Tensor(x)).data
    np.testing.assert_allclose(y, x / np.sqrt((x ** 2).mean()), rtol=1e-6)
    assert [n for n, _ in norm.named_parameters()] == ["weight"]


def test_rmsnorm_in_blocks_and_relu_ffn():
    model = tiny()
    for stack in (model.encoder, model.decoder):
        for block in stack.blocks:
            assert block.norm == "pre" and isinstance(block.ln1, RMSNorm) and isinstance(block.ln2, RMSNorm)
            assert block.mlp.activation == "relu"
    assert all(isinstance(b.ln_cross, RMSNorm) for b in model.decoder.blocks)


def test_generate_greedy_and_beam():
    model = tiny()
    out = model.generate(SRC, 6)
    assert out.shape[0] == 2 and out.shape[1] <= 6 and out.dtype == np.int64
    beam = model.generate(SRC, 6, num_beams=3)
    assert beam.shape[0] == 2 and beam.shape[1] <= 6
    assert ((beam >= 0) & (beam < V)).all()
    one = model.generate(SRC[0], 4)                             # a 1-D source is one row
    assert one.shape[0] == 1


def test_bad_input_raises():
    model = tiny()
    with pytest.raises(ShapeError):
        model(np.array([[5, V + 3]]), labels=TGT[:1])
    with pytest.raises(ShapeError):
        model(SRC)                                              # no decoder input, no labels
    with pytest.raises(ConfigError):
        T5Config(vocab_size=10, n_embd=10, n_head=3)


def test_checkpoint_round_trip(tmp_path):
    from minilm.checkpoint import load_model, model_meta, save_checkpoint
    model = tiny()
    save_checkpoint(tmp_path / "c.npz", model=model, meta=model_meta(model, model.config))
    again, _, _ = load_model(tmp_path / "c.npz")
    np.testing.assert_array_equal(again(SRC, labels=TGT)["logits"].data, model(SRC, labels=TGT)["logits"].data)


def test_recipe_smoke(tmp_path):
    from minilm.recipes import t5 as recipe
    from minilm.train import TrainConfig, train
    for extra in ({}, {"task": "reverse"}):
        cfg = override(recipe.T5RecipeConfig(), docs=30, n_embd=16, n_layer=1, batch_size=4, vocab_size=120, **extra)
        r = recipe.T5Recipe(cfg)
        if not extra:  # sentinels count down from the top of the vocabulary
            V_ = r.tokenizer.vocab_size
            assert r.tokenizer.id_to_token(V_ - 1) == "<extra_id_0>" and r.sentinels[1] == V_ - 2
        s = train(r, TrainConfig(steps=2, eval_every=2, checkpoint_every=2), tmp_path / str(len(extra)),
                  progress=False, plot=False)
        assert np.isfinite(s["initial_loss"]) and np.isfinite(s["final_loss"])
        assert "unigram_loss" in s["baselines"] and recipe.T5Recipe.describe(s)
        if extra:
            assert "exact_match" in s["metrics"] and "copy_exact_match" in s["baselines"]
    # fine-tune the pre-trained model (its tokenizer comes along) on a task
    r = recipe.T5Recipe(override(recipe.T5RecipeConfig(), task="copy", init=str(tmp_path / "0" / "checkpoint.npz")))
    assert r.model.config.n_embd == 16 and r.tokenizer.id_to_token(r.tokenizer.vocab_size - 1) == "<extra_id_0>"
    s = train(r, TrainConfig(steps=1, eval_every=1, checkpoint_every=1), tmp_path / "ft", progress=False, plot=False)
    assert np.isfinite(s["final_loss"])


@pytest.mark.slow
def test_tiny_t5_learns_reverse():
    from minilm.data import pad_batch
    from minilm.models.seq2seq import strip_after_eos
    from minilm.recipes.t5 import TaskData, task_tokenizer
    tok = task_tokenizer()
    data = TaskData("reverse", tok, eos_id=tok.sep_id, seed=0, min_len=3, max_len=4, n_val=100)
    model = T5(T5Config(vocab_size=tok.vocab_size, n_embd=48, n_head=4, n_layer=2, pad_id=tok.pad_id,
                        eos_id=tok.sep_id), rng=np.random.default_rng(0))
    opt = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    rng = np.random.default_rng(1)
    for step in range(400):
        pairs = data.sample(32, rng)
        src, mask = pad_batch([s for s, _ in pairs], tok.pad_id)
        labels, _ = pad_batch([t for _, t in pairs], -100)
        loss = model(src, attention_mask=mask, labels=labels)["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()
    src, mask = pad_batch([s for s, _ in data.val], tok.pad_id)
    out = model.generate(src, 8, attention_mask=mask)
    em = np.mean([p == t for p, t in zip(strip_after_eos(out, tok.sep_id), [t for _, t in data.val])])
    assert em > 0.8, f"exact match {em}"
