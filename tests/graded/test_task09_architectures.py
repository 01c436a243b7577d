"""Graded tests of Task 9.2: the three architectures of T5 as attention masks, and the loss positions
of a decoder-only model trained on (input, target) pairs."""
from __future__ import annotations

import numpy as np
import pytest

MOD = "task09_seq2seq.architectures"


def reference_prefix_mask(T, P):
    i, j = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
    return (j <= i) | (j < P)


def pads(rng, B, n, min_real=1):
    """(B, n) bool, True at padding: each row has a random number ≥ min_real of real tokens first."""
    lengths = rng.integers(min_real, n + 1, size=B)
    lengths[0] = max(min_real, n - 2)                       # at least one row with padding
    return np.arange(n)[None, :] >= lengths[:, None]


# -- encoder–decoder -------------------------------------------------------------------------------

@pytest.mark.task9_2
@pytest.mark.points(1)
def test_encoder_decoder_mask_shapes(impl):
    f = impl(MOD).encoder_decoder_masks
    rng = np.random.default_rng(0)
    src_pad, tgt_pad = pads(rng, 3, 7), pads(rng, 3, 5)
    enc, dec, cross = f(7, 5, src_pad, tgt_pad)
    for m, shape in ((enc, (3, 1, 7, 7)), (dec, (3, 1, 5, 5)), (cross, (3, 1, 5, 7))):
        m = np.asarray(m)
        assert m.dtype == bool and m.shape == shape, \
            ("encoder_decoder_masks(7, 5, ...) should give bool masks enc (3, 1, 7, 7), dec (3, 1, 5, 5), "
             f"cross (3, 1, 5, 7) (True = may attend); one was {m.dtype} {m.shape}, expected {shape}")


@pytest.mark.task9_2
@pytest.mark.points(2)
def test_encoder_fully_visible_except_source_padding(impl):
    f = impl(MOD).encoder_decoder_masks
    rng = np.random.default_rng(1)
    src_pad, tgt_pad = pads(rng, 4, 9), pads(rng, 4, 6)
    enc = np.broadcast_to(f(9, 6, src_pad, tgt_pad)[0], (4, 1, 9, 9))
    expected = np.broadcast_to(~src_pad[:, None, None, :], (4, 1, 9, 9))
    np.testing.assert_array_equal(enc, expected,
        err_msg=("encoder mask: every query sees every real source token both ways (True = may attend), "
                 "and no padded source key"))  # every query sees every real source token, both ways


@pytest.mark.task9_2
@pytest.mark.points(2)
def test_decoder_is_causal(impl):
    f = impl(MOD).encoder_decoder_masks
    rng = np.random.default_rng(2)
    src_pad, tgt_pad = pads(rng, 4, 6), pads(rng, 4, 8)
    dec = np.broadcast_to(f(6, 8, src_pad, tgt_pad)[1], (4, 1, 8, 8))
    i, j = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    assert not dec[:, :, j > i].any(), "a target position sees a later target token"
    expected = (j <= i)[None, None] & ~tgt_pad[:, None, None, :]
    np.testing.assert_array_equal(dec, expected,
        err_msg="decoder mask: causal (j <= i) and never a padded target key")


@pytest.mark.task9_2
@pytest.mark.points(2)
def test_cross_attention_ignores_source_padding(impl):
    f = impl(MOD).encoder_decoder_masks
    rng = np.random.default_rng(3)
    src_pad, tgt_pad = pads(rng, 5, 7), pads(rng, 5, 4)
    assert src_pad.any(), "test set-up: the source should have padding"
    cross = np.broadcast_to(f(7, 4, src_pad, tgt_pad)[2], (5, 1, 4, 7))
    expected = np.broadcast_to(~src_pad[:, None, None, :], (5, 1, 4, 7))
    np.testing.assert_array_equal(cross, expected,
        err_msg=("cross-attention mask: every target query sees every real source token, never a padded "
                 "one (and no causal part)"))  # all real source tokens, never a padded one


@pytest.mark.task9_2
@pytest.mark.points(1)
def test_encoder_decoder_masks_do_not_mutate(impl):
    f = impl(MOD).encoder_decoder_masks
    rng = np.random.default_rng(4)
    src_pad, tgt_pad = pads(rng, 3, 5), pads(rng, 3, 5)
    keep = src_pad.copy(), tgt_pad.copy()
    f(5, 5, src_pad, tgt_pad)
    np.testing.assert_array_equal(src_pad, keep[0],
        err_msg="encoder_decoder_masks modified src_pad in place")
    np.testing.assert_array_equal(tgt_pad, keep[1],
        err_msg="encoder_decoder_masks modified tgt_pad in place")


# -- language model and prefix LM ------------------------------------------------------------------

@pytest.mark.task9_2
@pytest.mark.points(1)
def test_causal_lm_mask(impl):
    f = impl(MOD).causal_lm_mask
    for T in (1, 2, 5, 9):
        m = np.asarray(f(T))
        assert m.shape == (T, T) and m.dtype == bool, \
            f"causal_lm_mask({T}) should be a ({T}, {T}) bool mask, got {m.dtype} {m.shape}"
        np.testing.assert_array_equal(m, np.tril(np.ones((T, T), bool)),
            err_msg=(f"causal_lm_mask({T}) should be lower-triangular with the diagonal (True = may attend): "
                     "np.tril(ones)"))
    assert np.asarray(f(0)).shape == (0, 0), "causal_lm_mask(0) should be an empty (0, 0) mask"


@pytest.mark.task9_2
@pytest.mark.points(2)
def test_prefix_visible_both_ways(impl):
    f = impl(MOD).prefix_lm_mask
    T = 9
    for P in range(2, T + 1):
        m = np.asarray(f(T, P))
        assert m.shape == (T, T) and m.dtype == bool, \
            f"prefix_lm_mask({T}, {P}) should be a ({T}, {T}) bool mask, got {m.dtype} {m.shape}"
        assert m[:P, :P].all(), f"P={P}: a prefix position does not see the whole prefix (later ones too)"
        assert m[P:, :P].all(), f"P={P}: a target position does not see the whole prefix"


@pytest.mark.task9_2
@pytest.mark.points(2)
def test_prefix_lm_never_sees_the_future_target(impl):
    f = impl(MOD).prefix_lm_mask
    T = 10
    for P in range(0, T + 1):
        m = np.asarray(f(T, P))
        for i in range(T):
            for j in range(max(P, i + 1), T):
                assert not m[i, j], f"P={P}: position {i} sees the later target position {j}"
        np.testing.assert_array_equal(m, reference_prefix_mask(T, P),
            err_msg=f"prefix_lm_mask({T}, {P}): the prefix (first P) is visible to everyone, the rest is causal")


@pytest.mark.task9_2
@pytest.mark.points(1)
def test_prefix_lm_limits(impl):
    f = impl(MOD).prefix_lm_mask
    causal = np.tril(np.ones((6, 6), bool))
    np.testing.assert_array_equal(np.asarray(f(6, 0)), causal,
        err_msg="prefix_lm_mask(6, 0) (no prefix) must be the causal mask")
    np.testing.assert_array_equal(np.asarray(f(6, 1)), causal,
        err_msg="prefix_lm_mask(6, 1) (a one-token prefix) must equal the causal mask")
    assert np.asarray(f(6, 6)).all(), "prefix_lm_mask(6, 6) (all prefix) must let every position see every other"


# -- where the loss is counted ---------------------------------------------------------------------

@pytest.mark.task9_2
@pytest.mark.points(2)
def test_lm_labels_example(impl):
    f = impl(MOD).lm_labels
    # row 0: prefix "11 12 13" (P=3), target "21 22 1", then padding; row 1: P=2, L=4
    ids = np.array([[11, 12, 13, 21, 22, 1, 0, 0],
                    [31, 32, 41, 1, 0, 0, 0, 0]])
    labels = np.asarray(f(ids, np.array([3, 2]), np.array([6, 4])))
    N = -100
    np.testing.assert_array_equal(labels, [[N, N, 21, 22, 1, N, N, N],
                                           [N, 41, 1, N, N, N, N, N]],
        err_msg=("lm_labels: label t is ids[t + 1] where t + 1 is a target token (prefix ≤ t + 1 < length), "
                 "-100 elsewhere"))


@pytest.mark.task9_2
@pytest.mark.points(2)
def test_lm_labels_only_target_tokens(impl):
    f = impl(MOD).lm_labels
    rng = np.random.default_rng(5)
    for _ in range(30):
        B, T = 6, 12
        lengths = rng.integers(1, T + 1, size=B)
        prefix = np.array([rng.integers(0, L + 1) for L in lengths])
        ids = rng.integers(5, 50, size=(B, T))
        ids[np.arange(T)[None, :] >= lengths[:, None]] = 0
        before = ids.copy()
        labels = np.asarray(f(ids, prefix, lengths))
        np.testing.assert_array_equal(ids, before,
            err_msg="lm_labels modified ids in place")             # not mutated
        assert labels.shape == (B, T), f"lm_labels should return ({B}, {T}) labels, got {labels.shape}"
        for b in range(B):
            for t in range(T):
                counted = prefix[b] <= t + 1 < lengths[b]
                if counted:
                    assert labels[b, t] == ids[b, t + 1], "labels must be the next token (teacher forcing)"
                else:
                    assert labels[b, t] == -100, (f"position {t} of a row with P={prefix[b]}, L={lengths[b]} "
                                                  "predicts a prefix token, padding or past the end")


@pytest.mark.task9_2
@pytest.mark.points(1)
def test_lm_labels_custom_ignore_index(impl):
    f = impl(MOD).lm_labels
    labels = np.asarray(f(np.array([[7, 8, 9, 1]]), np.array([2]), np.array([4]), ignore_index=-1))
    np.testing.assert_array_equal(labels, [[-1, 9, 1, -1]],
        err_msg="lm_labels(..., ignore_index=-1) must use -1 where nothing is predicted, not -100")


# -- the masks in a model: one code path, two architectures ----------------------------------------

@pytest.mark.task9_2
@pytest.mark.points(2)
def test_prefix_lm_model_with_these_masks(impl):
    """The library's PrefixLM run on this implementation: the prefix is read both ways, a target
    position never depends on a later token, and the causal LM never looks ahead."""
    from minilm.models.prefixlm import PrefixLM, PrefixLMConfig
    ids = np.array([[5, 6, 7, 8, 9, 10, 11, 12]])
    changed_prefix = ids.copy()
    changed_prefix[0, 3] = 20                               # the last prefix token (P = 4)
    changed_target = ids.copy()
    changed_target[0, 6] = 21                               # a target token
    with impl.use("task09_seq2seq"):
        for arch in ("prefixlm", "causal"):
            model = PrefixLM(PrefixLMConfig(vocab_size=24, block_size=8, n_layer=1, n_head=2, n_embd=16, arch=arch),
                             rng=np.random.default_rng(0))
            run = lambda x: model(x, np.array([4]))["logits"].data  # noqa: E731
            base, pre, tgt = run(ids), run(changed_prefix), run(changed_target)
            np.testing.assert_array_equal(base[0, :6], tgt[0, :6],
                err_msg=(f"{arch}: changing the target token at position 6 changed the logits of an earlier "
                         "position: a target must never see later tokens"))  # positions < 6 never see token 6
            moved = np.abs(base[0, :3] - pre[0, :3]).max()
            if arch == "prefixlm":
                assert moved > 1e-6, "prefix positions must see the later prefix tokens"
            else:
                assert moved == 0.0, "a causal LM must not see later tokens"
