"""Graded tests of Task 3.4: the residual order of pre-LN (GPT-2) and post-LN (BERT) blocks.

The block's own modules compute each sublayer; the layer norms get random weights and biases, so
a norm in the wrong place or a missing residual changes the output.
"""
import numpy as np
import pytest

from autograd import Tensor
from minilm.blocks import Block, causal_mask, padding_mask

MOD = "task03_transformer.blocks"


def _block(rng, norm, cross=False, C=8, H=2):
    block = Block(C, H, rng=rng, norm=norm, cross_attention=cross).to(np.float64)
    for ln in (block.ln1, block.ln2, block.ln_cross):
        if ln is not None:
            ln.weight.data[...] = rng.uniform(0.5, 2.0, size=C)
            ln.bias.data[...] = rng.standard_normal(C)
    return block


def _expected(block, x, mask, enc=None, enc_mask=None):
    """The two layouts written out from the block's modules (the library's reference)."""
    if block.norm == "pre":
        x = x + block.attn(block.ln1(x), mask=mask)
        if enc is not None:
            x = x + block.cross_attn(block.ln_cross(x), mask=enc_mask, kv=enc)
        return x + block.mlp(block.ln2(x))
    x = block.ln1(x + block.attn(x, mask=mask))
    if enc is not None:
        x = block.ln_cross(x + block.cross_attn(x, mask=enc_mask, kv=enc))
    return block.ln2(x + block.mlp(x))


@pytest.mark.task3_4
@pytest.mark.points(2)
def test_pre_ln_block(impl):
    pre_ln_forward = impl(MOD).pre_ln_forward
    rng = np.random.default_rng(0)
    block = _block(rng, "pre")
    x = Tensor(rng.standard_normal((2, 5, 8)))
    mask = causal_mask(5)
    got = pre_ln_forward(block, x, mask=mask)
    assert got.shape == (2, 5, 8), f"pre_ln_forward on x (2, 5, 8) must return (2, 5, 8), got {got.shape}"
    np.testing.assert_allclose(got.data, _expected(block, x, mask).data, rtol=1e-9, atol=1e-12,
                               err_msg="pre-LN: x = x + Attn(LN1(x)); x = x + MLP(LN2(x))")


@pytest.mark.task3_4
@pytest.mark.points(2)
def test_post_ln_block(impl):
    post_ln_forward = impl(MOD).post_ln_forward
    rng = np.random.default_rng(1)
    block = _block(rng, "post")
    x = Tensor(rng.standard_normal((2, 5, 8)))
    mask = padding_mask(np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]))
    got = post_ln_forward(block, x, mask=mask)
    assert got.shape == (2, 5, 8), f"post_ln_forward on x (2, 5, 8) must return (2, 5, 8), got {got.shape}"
    np.testing.assert_allclose(got.data, _expected(block, x, mask).data, rtol=1e-9, atol=1e-12,
                               err_msg="post-LN: x = LN1(x + Attn(x)); x = LN2(x + MLP(x))")


@pytest.mark.task3_4
@pytest.mark.points(1)
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_decoder_block_with_cross_attention(impl, norm):
    forward = getattr(impl(MOD), f"{norm}_ln_forward")
    rng = np.random.default_rng(2)
    block = _block(rng, norm, cross=True)
    x = Tensor(rng.standard_normal((2, 3, 8)))
    enc = Tensor(rng.standard_normal((2, 6, 8)))
    mask = causal_mask(3)
    enc_mask = padding_mask(np.array([[1] * 6, [1] * 2 + [0] * 4]))
    got = forward(block, x, mask=mask, enc=enc, enc_mask=enc_mask)
    want = _expected(block, x, mask, enc, enc_mask)
    np.testing.assert_allclose(got.data, want.data, rtol=1e-9, atol=1e-12,
                               err_msg=f"{norm}-LN decoder block: self-attention, cross-attention "
                                       "(keys/values from enc), MLP — each with its residual and norm")
    assert block.cross_attn.last_attention.shape == (2, 2, 3, 6), \
        ("the decoder block's cross-attention weights should be (B, H, Tq, Tk) = (2, 2, 3, 6) (keys from "
         f"the encoder), got {block.cross_attn.last_attention.shape}")
