"""Graded tests of Task 7.3: ``variant_targets`` (the ablations' targets and loss positions) and
``copy_mlm_loss`` (All-Tokens MLM with the copy mechanism), alone and inside the ELECTRA model."""
import numpy as np
import pytest

from autograd import Tensor

MOD = "task07_electra.variants"

PAD, CLS, SEP, MASK = 0, 2, 3, 4

# Two rows: [CLS] body [SEP] pad. Masked: positions 2, 3, 5 of row 0 and 1, 4 of row 1. The sample
# at (0, 3) and at (1, 4) equals the original (a correct guess); the others are replacements.
ORIGINAL = np.array([[CLS, 10, 11, 12, 13, 14, SEP, PAD],
                     [CLS, 20, 21, 22, 23, SEP, PAD, PAD]])
CORRUPTED = np.array([[CLS, 10, 30, 12, 13, 31, SEP, PAD],
                      [CLS, 32, 21, 22, 23, SEP, PAD, PAD]])
MASKED = np.zeros((2, 8), dtype=bool)
MASKED[0, [2, 3, 5]] = True
MASKED[1, [1, 4]] = True
REAL = (ORIGINAL != PAD).astype(np.int64)
REPLACED = np.zeros((2, 8), dtype=np.int64)
REPLACED[0, [2, 5]] = 1
REPLACED[1, 1] = 1


def _targets(impl, objective, **kw):
    args = dict(original=ORIGINAL, corrupted=CORRUPTED, masked=MASKED, attention_mask=REAL)
    args.update(kw)
    keep = {k: np.array(v, copy=True) for k, v in args.items()}
    labels, weights = impl(MOD).variant_targets(objective, *args.values())
    for k, v in args.items():
        assert np.array_equal(v, keep[k]), f"variant_targets wrote into {k}"
    labels, weights = np.asarray(labels), np.asarray(weights)
    assert labels.shape == weights.shape == ORIGINAL.shape, \
        (f"variant_targets({objective!r}) should return labels and weights of shape {ORIGINAL.shape}, got "
         f"{labels.shape} and {weights.shape}")
    assert weights.dtype == bool, "weights should be a bool array"
    return labels, weights


@pytest.mark.task7_3
@pytest.mark.points(2)
def test_electra_counts_all_real_tokens_and_electra15_only_the_masked(impl):
    labels, weights = _targets(impl, "electra")
    assert np.array_equal(labels, REPLACED), "ELECTRA's labels: 1 where masked and the sample differs"
    assert np.array_equal(weights, REAL.astype(bool)), "ELECTRA counts every real token, [CLS]/[SEP] included"
    labels, weights = _targets(impl, "electra15")
    assert np.array_equal(labels, REPLACED), "ELECTRA-15% has ELECTRA's labels"
    assert np.array_equal(weights, MASKED), \
        "ELECTRA-15% counts exactly the masked positions (a correct sample included: its label is 0)"


@pytest.mark.task7_3
@pytest.mark.points(2)
def test_replace_mlm_predicts_the_original_at_every_masked_position(impl):
    labels, weights = _targets(impl, "replace_mlm")
    expected = np.where(MASKED, ORIGINAL, -100)
    assert np.array_equal(labels, expected), (
        f"Replace MLM: the original token at every masked position (the correctly sampled ones too), "
        f"-100 elsewhere; got {labels.tolist()}")
    assert np.array_equal(weights, MASKED), "Replace MLM weighs exactly the masked positions"


@pytest.mark.task7_3
@pytest.mark.points(2)
def test_all_tokens_mlm_predicts_every_real_token(impl):
    labels, weights = _targets(impl, "all_tokens_mlm")
    expected = np.where(REAL.astype(bool), ORIGINAL, -100)
    assert np.array_equal(labels, expected), (
        f"All-Tokens MLM: the original token at every real position (masked or not), -100 on padding; "
        f"got {labels.tolist()}")
    assert np.array_equal(weights, REAL.astype(bool)), "All-Tokens MLM weighs every real (non-padding) position"


@pytest.mark.task7_3
@pytest.mark.points(1)
def test_variant_targets_on_random_batches(impl):
    rng = np.random.default_rng(0)
    for _ in range(30):
        B, T = rng.integers(1, 5), rng.integers(2, 12)
        original = rng.integers(5, 9, size=(B, T))
        real = rng.random((B, T)) < 0.8
        masked = real & (rng.random((B, T)) < 0.4)
        corrupted = np.where(masked, rng.integers(5, 9, size=(B, T)), original)
        replaced = masked & (corrupted != original)
        expect = {"electra": (replaced, real), "electra15": (replaced, masked),
                  "replace_mlm": (np.where(masked, original, -100), masked),
                  "all_tokens_mlm": (np.where(real, original, -100), real)}
        for objective, (labels, weights) in expect.items():
            got_l, got_w = impl(MOD).variant_targets(objective, original, corrupted, masked, real.astype(int))
            assert np.array_equal(got_l, labels) and np.array_equal(got_w, weights), \
                (f"variant_targets({objective!r}) on a random ({B}, {T}) case: expected labels {labels.tolist()} and "
                 f"weights {weights.astype(int).tolist()}, got {np.asarray(got_l).tolist()} and "
                 f"{np.asarray(got_w).astype(int).tolist()}")


# ---------------------------------------------------------------- copy_mlm_loss

def _copy_reference(logits, c, inputs, labels):
    valid = labels != -100
    z = logits - logits.max(-1, keepdims=True)
    p_vocab = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    p_label = np.take_along_axis(p_vocab, np.where(valid, labels, 0)[..., None], -1)[..., 0]
    D = 1 / (1 + np.exp(-c))
    p = D * (labels == inputs) + (1 - D) * p_label
    return float((-np.log(p + 1e-9) * valid).sum() / max(valid.sum(), 1))


def _copy_case(seed=0):
    rng = np.random.default_rng(seed)
    B, T, V = 3, 6, 9
    logits = rng.normal(size=(B, T, V))
    c = rng.normal(size=(B, T))
    labels = rng.integers(0, V, size=(B, T))
    inputs = np.where(rng.random((B, T)) < 0.5, labels, (labels + 1) % V)  # half copied, half replaced
    labels[2, 4:] = -100                                                    # padding
    return logits, c, inputs, labels


@pytest.mark.task7_3
@pytest.mark.points(2)
def test_copy_mlm_loss_value(impl):
    for seed in range(3):
        logits, c, inputs, labels = _copy_case(seed)
        got = impl(MOD).copy_mlm_loss(Tensor(logits), Tensor(c), inputs, labels).item()
        assert np.isclose(got, _copy_reference(logits, c, inputs, labels), rtol=1e-6), (
            "expected mean over labelled t of −log(D·1[x_t = x̂_t] + (1 − D)·softmax(logits)[x_t] + 1e-9)")


@pytest.mark.task7_3
@pytest.mark.points(1)
def test_copy_mlm_loss_ignores_unlabelled_positions_and_handles_none(impl):
    logits, c, inputs, labels = _copy_case(1)
    base = impl(MOD).copy_mlm_loss(Tensor(logits), Tensor(c), inputs, labels).item()
    logits2, c2 = logits.copy(), c.copy()
    logits2[2, 4:] += 50.0
    c2[2, 4:] -= 20.0
    again = impl(MOD).copy_mlm_loss(Tensor(logits2), Tensor(c2), inputs, labels).item()
    assert np.isclose(base, again), "positions labelled -100 changed the loss"
    none = impl(MOD).copy_mlm_loss(Tensor(logits), Tensor(c), inputs, np.full_like(labels, -100)).item()
    assert np.isfinite(none) and abs(none) < 1e-12, "no labelled position: the loss is 0, not NaN"


@pytest.mark.task7_3
@pytest.mark.points(2)
def test_copy_mlm_loss_gradient(impl):
    from tests.helpers import numeric_grad
    logits, c, inputs, labels = _copy_case(2)
    L, C = Tensor(logits, requires_grad=True), Tensor(c, requires_grad=True)
    impl(MOD).copy_mlm_loss(L, C, inputs, labels).backward()
    assert L.grad is not None and C.grad is not None, "the gradient must reach both the MLM and the copy logits"
    up = np.ones(())
    num_c = numeric_grad(lambda x: np.asarray(_copy_reference(logits, x, inputs, labels)), c, up)
    num_l = numeric_grad(lambda x: np.asarray(_copy_reference(x, c, inputs, labels)), logits, up)
    assert np.allclose(C.grad, num_c, atol=1e-6) and np.allclose(L.grad, num_l, atol=1e-6), \
        "the gradient does not match central differences"


# ---------------------------------------------------------------- inside the model

@pytest.mark.task7_3
@pytest.mark.points(2)
def test_the_model_trains_each_variant_on_its_positions(impl, monkeypatch):
    import minilm.models.electra as electra
    from minilm.models.electra import Electra, ElectraConfig
    # the model runs on the reference everywhere except the two slots of this task
    monkeypatch.setattr(electra, "variant_targets", impl(MOD).variant_targets)
    monkeypatch.setattr(electra, "copy_mlm_loss", impl(MOD).copy_mlm_loss)
    rng = np.random.default_rng(7)
    ids = np.full((16, 12), PAD, dtype=np.int64)
    ids[:, 0], ids[:, 1:9], ids[:, 9] = CLS, rng.integers(5, 12, size=(16, 8)), SEP
    mask = ids != PAD
    for objective in ("electra15", "replace_mlm", "all_tokens_mlm"):
        cfg = ElectraConfig(vocab_size=12, max_position_embeddings=12, n_layer=1, n_head=2, n_embd=16,
                            dropout=0.0, objective=objective)
        out = Electra(cfg, rng=np.random.default_rng(0))(ids, mask, rng=np.random.default_rng(1))
        m, x = out["masked"], out["disc_inputs"]
        if objective == "electra15":
            z, y = out["disc_logits"].data, out["disc_labels"]
            bce = np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))
            assert np.isclose(out["disc_loss"].item(), bce[m].sum() / (m.sum() + 1e-6), rtol=1e-5), \
                "electra15: the discriminator's BCE should be averaged over the masked positions only"
        else:
            where = m if objective == "replace_mlm" else mask
            assert np.array_equal(out["main_labels"], np.where(where, ids, -100)), \
                (f"{objective}: the model's main_labels should be the original ids at the "
                 f"{'masked' if objective == 'replace_mlm' else 'real'} positions and -100 elsewhere (variant_targets)")
        assert np.isclose(out["loss"].item(), out["mlm_loss"].item()
                          + (50.0 if objective == "electra15" else 1.0) * out["disc_loss"].item(), rtol=1e-5), \
            f"{objective}: loss should be mlm_loss + λ·disc_loss with λ = 50 for electra15 (1 for the MLM variants)"
        assert np.array_equal(x[~m], ids[~m]), "every variant reads the generator-corrupted ids"
