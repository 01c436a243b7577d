"""The three architectures of T5 (Raffel et al. Fig. 4) over one code path: the prefix LM and the
causal LM (minilm/models/prefixlm.py) and the encoder–decoder's masks (minilm/models/t5.py)."""
from __future__ import annotations

import numpy as np
import pytest

from autograd.errors import ConfigError, ShapeError
from minilm import blocks
from minilm.corruption import t5 as t5_corruption
from minilm.models import prefixlm as P
from minilm.models import t5 as T
from minilm.recipes.config import override


def model(arch, **kw):
    cfg = dict(vocab_size=30, block_size=12, n_layer=2, n_head=2, n_embd=16, arch=arch)
    cfg.update(kw)
    return P.PrefixLM(P.PrefixLMConfig(**cfg), rng=np.random.default_rng(0))


IDS = np.array([[5, 6, 7, 8, 9, 10, 11, 12, 0, 0]])  # prefix 5 6 7 8 (P=4), target 9 10 11 12, padding


def test_masks_agree_with_the_library_versions():
    for T_ in (1, 4, 7):
        for p in range(T_ + 1):
            m = P.prefix_lm_mask(T_, p)
            np.testing.assert_array_equal(m, blocks.prefix_lm_mask(T_, p))
            np.testing.assert_array_equal(m, t5_corruption.prefix_lm_mask(T_, p))
        np.testing.assert_array_equal(P.causal_lm_mask(T_), blocks.causal_mask(T_))


def test_prefix_lm_mask_sees_the_prefix_both_ways_and_no_future():
    m = P.prefix_lm_mask(6, 3)
    assert m[:3, :3].all()                                     # the prefix, both directions
    assert not m[:3, 3:].any()                                 # the prefix never sees the target
    assert not m[3:, 3:][np.triu_indices(3, 1)].any()          # the target is causal
    with pytest.raises(ConfigError):
        P.prefix_lm_mask(4, 5)


@pytest.mark.parametrize("arch", ["prefixlm", "causal"])
def test_no_position_sees_a_later_target_token(arch):
    lm = model(arch)
    base = lm(IDS, np.array([4]))["logits"].data
    for t in range(4, 8):                                       # change target token t
        changed = IDS.copy()
        changed[0, t] = 20
        out = lm(changed, np.array([4]))["logits"].data
        np.testing.assert_array_equal(out[0, :t], base[0, :t])


def test_prefix_lm_reads_the_prefix_both_ways_causal_does_not():
    changed = IDS.copy()
    changed[0, 3] = 20                                          # the last prefix token
    for arch, sees in (("prefixlm", True), ("causal", False)):
        lm = model(arch)
        a = lm(IDS, np.array([4]))["logits"].data
        b = lm(changed, np.array([4]))["logits"].data
        assert (np.abs(a[0, :3] - b[0, :3]).max() > 1e-6) == sees, arch


def test_same_parameters_for_both_architectures():
    a, b = model("prefixlm"), model("causal")
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys() and all(np.array_equal(sa[k], sb[k]) for k in sa)
    # with the prefix of length 0 or 1 the prefix LM *is* the causal LM
    np.testing.assert_array_equal(a(IDS, np.array([1]))["logits"].data, b(IDS, np.array([1]))["logits"].data)


def test_loss_only_on_target_tokens():
    lm = model("prefixlm")
    lengths = np.array([8])
    labels = P.lm_labels(IDS, np.array([4]), lengths)
    np.testing.assert_array_equal(labels[0], [-100, -100, -100, 9, 10, 11, 12, -100, -100, -100])
    out = lm(IDS, np.array([4]), labels=labels)
    logits = out["logits"].data[0]
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    expected = -np.mean([logp[t, IDS[0, t + 1]] for t in range(3, 7)])
    assert abs(out["loss"].item() - expected) < 1e-5


def test_padding_keys_are_masked():
    lm = model("prefixlm")
    a = lm(IDS[:, :8], np.array([4]))["logits"].data
    b = lm(IDS, np.array([4]))["logits"].data                   # two pads more
    np.testing.assert_allclose(a[0], b[0, :8], rtol=1e-5, atol=1e-5)


def test_generate_and_checks():
    lm = model("prefixlm")
    out = lm.generate([[5, 6, 7], [8, 9], [5, 6, 9]], 4, eos_id=3)
    assert len(out) == 3 and all(1 <= len(o) <= 4 for o in out)
    with pytest.raises(ShapeError):
        lm(np.zeros((1, 13), dtype=np.int64), np.array([2]))    # longer than block_size
    with pytest.raises(ConfigError):
        P.PrefixLMConfig(arch="encdec")


def test_encoder_decoder_masks_in_t5():
    enc, dec, cross = T.encoder_decoder_masks(4, 3, np.array([[False, False, True, True]]),
                                              np.zeros((1, 3), bool))
    np.testing.assert_array_equal(enc[0, 0], np.broadcast_to([True, True, False, False], (4, 4)))
    np.testing.assert_array_equal(dec[0, 0], np.tril(np.ones((3, 3), bool)))
    np.testing.assert_array_equal(cross[0, 0], np.broadcast_to([True, True, False, False], (3, 4)))


@pytest.mark.parametrize("arch", ["prefixlm", "causal"])
def test_recipe_smoke(tmp_path, arch):
    from minilm.recipes import prefixlm as recipe
    from minilm.train import TrainConfig, train
    r = recipe.PrefixLMRecipe(override(recipe.PrefixLMRecipeConfig(), arch=arch, n_embd=16, n_layer=1, batch_size=4))
    assert r.model.config.arch == arch
    s = train(r, TrainConfig(steps=2, eval_every=2, checkpoint_every=2), tmp_path, progress=False, plot=False)
    assert np.isfinite(s["final_loss"]) and "exact_match" in s["metrics"] and recipe.PrefixLMRecipe.describe(s)


def test_recipe_task_span_is_t5s_span_corruption_as_one_sequence(tmp_path):
    """--task span: the pairs T5's recipe would train on (same windows), each one sequence
    [corrupted window ; spans], the loss on the spans alone; the summary's baseline is a unigram model."""
    from minilm.recipes import prefixlm as recipe
    from minilm.recipes import t5
    from minilm.train import TrainConfig, train
    sizes = dict(docs=40, vocab_size=150, seed=3)
    r = recipe.PrefixLMRecipe(override(recipe.PrefixLMRecipeConfig(), task="span", n_embd=16, n_layer=1,
                                       batch_size=4, **sizes))
    want = t5.T5Recipe(override(t5.T5RecipeConfig(), **sizes)).val
    assert [(list(a), list(b)) for a, b in r.data.val] == [(list(a), list(b)) for a, b in want]
    ids, prefix, mask, labels = r._arrays(r.data.val[:2])
    for row, (source, target) in enumerate(r.data.val[:2]):
        assert prefix[row] == len(source) and list(ids[row, :len(source)]) == list(source)
        scored = labels[row][labels[row] != -100]                  # the spans, each next token of the sequence
        assert list(scored) == list(target)
    s = train(r, TrainConfig(steps=2, eval_every=2, checkpoint_every=2), tmp_path, progress=False, plot=False)
    assert "exact_match" not in s["metrics"] and "unigram model of the targets" in recipe.PrefixLMRecipe.describe(s)


def test_the_causal_prefix_lm_is_gpt_under_another_name():
    """PrefixLM is GPT's stack (minilm/models/gpt.py GPTStack): same parameter names and values
    from the same seed, and with arch="causal" and no padding the same logits as GPT."""
    from minilm.models.gpt import GPT, GPTConfig
    sizes = dict(vocab_size=30, block_size=12, n_layer=2, n_head=2, n_embd=16)
    gpt = GPT(GPTConfig(**sizes), rng=np.random.default_rng(0))
    lm = P.PrefixLM(P.PrefixLMConfig(arch="causal", **sizes), rng=np.random.default_rng(0))
    a, b = dict(gpt.named_parameters()), dict(lm.named_parameters())
    assert list(a) == list(b), f"PrefixLM's parameters {list(b)} are not GPT's {list(a)}"
    assert all(np.array_equal(a[k].data, b[k].data) for k in a), "same seed, same init: the values differ"
    ids = IDS[:, :8]
    np.testing.assert_allclose(lm(ids, np.array([4]))["logits"].data, gpt(ids)[0].data, rtol=1e-5, atol=1e-6,
                               err_msg="a causal PrefixLM without padding should compute what GPT computes")


@pytest.mark.parametrize("make", ["gpt-blocks", "t5-blocks"])
def test_both_prefix_lms_generate_the_argmax_of_their_forward(make):
    """One greedy generate (PrefixLMBase.generate, over minilm.decoding.generate_tokens) for both
    stacks; the learned-position one stops at its block_size."""
    if make == "gpt-blocks":
        lm = model("prefixlm")
    else:
        lm = P.T5DecoderOnly(P.DecoderOnlyConfig(vocab_size=30, n_embd=16, n_head=2, n_layer=2, arch="prefixlm"),
                             rng=np.random.default_rng(0))
    lm.eval()
    prefix = [5, 6, 7, 8]
    ids = list(prefix)
    for _ in range(6):
        keys = np.ones((1, len(ids)), bool)                      # a generated token is a real key, even id 0
        ids.append(int(lm(np.array([ids]), len(prefix), keys)["logits"].data[0, -1].argmax()))
    assert lm.generate([prefix], 6) == [ids[len(prefix):]]
    if make == "gpt-blocks":
        assert len(lm.generate([prefix], 20)[0]) == 12 - len(prefix), "generation must stop at block_size"
