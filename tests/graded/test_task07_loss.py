"""Graded tests of Task 7.2: ``discriminator_loss``, ``replaced_token_detection``, ``tie_embeddings``.

The model is a tiny ELECTRA (V = 12, so a random generator often samples the original token) with
dropout off, so that a network called twice on the same ids gives the same numbers.
"""
import types

import numpy as np
import pytest

from autograd import Tensor
from minilm.models.electra import Electra, ElectraConfig, ElectraDiscriminator, ElectraGenerator, generator_parameters

MOD = "task07_electra.loss"

PAD, CLS, SEP, MASK = 0, 2, 3, 4
V = 12


def _config(**kw):
    base = dict(vocab_size=V, max_position_embeddings=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0,
                pad_id=PAD, mask_id=MASK, special_ids=(CLS, SEP))
    return ElectraConfig(**{**base, **kw})


def _batch(B=24, T=14, seed=0):
    """[CLS] body [SEP] pad…: body lengths vary, ids of the body in [5, V)."""
    rng = np.random.default_rng(seed)
    ids = np.full((B, T), PAD, dtype=np.int64)
    for b in range(B):
        n = int(rng.integers(4, T - 1))
        ids[b, 0], ids[b, 1:n + 1], ids[b, n + 1] = CLS, rng.integers(5, V, size=n), SEP
    return ids, ids != PAD


def _bce(z, y):
    return np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))


def _ce(logits, labels):
    m = labels != -100
    z = logits[m] - logits[m].max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return float(-logp[np.arange(m.sum()), labels[m]].mean())


# ---------------------------------------------------------------- discriminator_loss

@pytest.mark.task7_2
@pytest.mark.points(2)
def test_discriminator_loss_counts_every_real_token_and_no_pad(impl):
    discriminator_loss = impl(MOD).discriminator_loss
    rng = np.random.default_rng(1)
    z = rng.normal(0, 2, size=(4, 9))
    y = (rng.random((4, 9)) < 0.2).astype(np.int64)
    a = np.ones((4, 9), dtype=np.int64)
    a[1, 6:] = 0
    a[3, 3:] = 0
    z[a == 0] = 30.0                                # a padded position, badly wrong if it counted
    y[a == 0] = 0
    loss = discriminator_loss(Tensor(z), y, a)
    expected = (_bce(z, y) * a).sum() / (a.sum() + 1e-6)
    assert np.isclose(loss.item(), expected, rtol=1e-6), (
        f"got {loss.item():.6f}, expected {expected:.6f}: the mean over every real token "
        f"(padding excluded, [CLS]/[SEP] and unmasked tokens included)")


@pytest.mark.task7_2
@pytest.mark.points(2)
def test_discriminator_loss_gradient(impl):
    discriminator_loss = impl(MOD).discriminator_loss
    rng = np.random.default_rng(2)
    z = Tensor(rng.normal(size=(3, 7)), requires_grad=True)
    y = (rng.random((3, 7)) < 0.3).astype(np.int64)
    a = np.ones((3, 7), dtype=bool)
    a[0, 5:] = a[2, 2:] = False
    discriminator_loss(z, y, a).backward()
    sig = 1 / (1 + np.exp(-z.data))
    expected = (sig - y) * a / (a.sum() + 1e-6)
    assert z.grad is not None, "no gradient reached the logits"
    assert np.allclose(z.grad, expected, atol=1e-8), "the gradient should be (σ(z) − y)·a / Σa"
    assert not z.grad[~a].any(), "a padded position received a gradient"


@pytest.mark.task7_2
@pytest.mark.points(1)
def test_discriminator_loss_all_padding_is_zero(impl):
    discriminator_loss = impl(MOD).discriminator_loss
    loss = discriminator_loss(Tensor(np.ones((2, 3))), np.zeros((2, 3), np.int64), np.zeros((2, 3)))
    assert np.isfinite(loss.item()) and abs(loss.item()) < 1e-9, "an all-padding batch must give 0, not NaN"


# ---------------------------------------------------------------- replaced_token_detection

def _run(impl, cfg=None, seed=3, B=24):
    model = Electra(cfg or _config(), rng=np.random.default_rng(0))
    ids, mask = _batch(B=B, seed=seed)
    out = impl(MOD).replaced_token_detection(model, ids, mask, rng=np.random.default_rng(seed))
    return model, ids, mask, out


@pytest.mark.task7_2
@pytest.mark.points(2)
def test_total_loss_is_mlm_plus_lambda_disc(impl):
    for weights in ({}, {"disc_weight": 7.0, "gen_weight": 0.5}):
        cfg = _config(**weights)
        _, _, _, out = _run(impl, cfg)
        expected = cfg.gen_weight * out["mlm_loss"].item() + cfg.disc_weight * out["disc_loss"].item()
        assert np.isclose(out["loss"].item(), expected, rtol=1e-5), (
            f"loss {out['loss'].item():.4f} != gen_weight·L_MLM + λ·L_Disc = {expected:.4f} "
            f"(λ = config.disc_weight = {cfg.disc_weight})")


@pytest.mark.task7_2
@pytest.mark.points(2)
def test_generator_reads_masked_input_and_mlm_loss_on_masked_positions(impl):
    model, ids, mask, out = _run(impl)
    masked, gen_inputs = out["masked"], out["generator_inputs"]
    assert np.array_equal(gen_inputs[~masked], ids[~masked]) and (gen_inputs[masked] == MASK).any(), \
        "generator_inputs should be the [MASK]ed ids from the given masking step"
    assert np.array_equal(out["mlm_labels"], np.where(masked, ids, -100)), \
        "mlm_labels should be the original id at the masked positions and -100 elsewhere"
    again = model.generator(gen_inputs, mask).data
    assert np.allclose(out["mlm_logits"].data, again, atol=1e-5), \
        "mlm_logits are not the generator's output on the [MASK]ed input"
    assert np.isclose(out["mlm_loss"].item(), _ce(again, out["mlm_labels"]), rtol=1e-5), \
        "L_MLM should be the mean cross-entropy over the masked positions only"


@pytest.mark.task7_2
@pytest.mark.points(2)
def test_discriminator_reads_samples_and_its_loss_covers_all_real_tokens(impl):
    model, ids, mask, out = _run(impl)
    masked, x_hat = out["masked"], out["disc_inputs"]
    assert isinstance(x_hat, np.ndarray) and np.issubdtype(x_hat.dtype, np.integer), \
        "disc_inputs must be plain NumPy ids"
    assert np.array_equal(x_hat[~masked], ids[~masked]), "x̂ differs from x outside the masked positions"
    argmax = out["mlm_logits"].data.argmax(-1)
    assert (x_hat[masked] == argmax[masked]).mean() < 0.5, \
        "x̂ follows the generator's argmax: it should hold *samples* from softmax(logits / T)"
    assert (x_hat[masked] != ids[masked]).mean() > 0.5, "most masked positions should hold a replacement"
    z = model.discriminator(x_hat, mask).data
    assert np.allclose(out["disc_logits"].data, z, atol=1e-5), "disc_logits are not the discriminator's output on x̂"
    a = mask.astype(float)
    expected = (_bce(z, out["disc_labels"]) * a).sum() / (a.sum() + 1e-6)
    assert np.isclose(out["disc_loss"].item(), expected, rtol=1e-5), \
        "L_Disc should average over every real token (not the padding, not only the masked positions)"


@pytest.mark.task7_2
@pytest.mark.points(2)
def test_a_sample_equal_to_the_original_is_labelled_original(impl):
    hits = 0
    for seed in range(3):
        _, ids, _, out = _run(impl, seed=seed, B=48)
        masked, x_hat, y = out["masked"], out["disc_inputs"], out["disc_labels"]
        assert np.array_equal(y, (masked & (x_hat != ids)).astype(y.dtype)), \
            "disc_labels must be 1 exactly where a masked token was replaced by a different one"
        hits += int((masked & (x_hat == ids)).sum())
    assert hits > 0, "the test needs masked positions whose sample equals the original"


@pytest.mark.task7_2
@pytest.mark.points(3)
def test_no_gradient_from_the_discriminator_loss_reaches_the_generator(impl):
    model, ids, mask, out = _run(impl)
    model.zero_grad()
    out["disc_loss"].backward()
    gen_only = generator_parameters(model)
    assert gen_only, "the generator has parameters of its own"
    leaked = [p.shape for p in gen_only if p.grad is not None and np.any(p.grad != 0)]
    assert not leaked, (f"L_Disc sent a gradient to {len(leaked)} generator parameters {leaked[:3]}: "
                        "build x̂ from sampled ids (NumPy), with no path back to the generator")
    table = model.discriminator.embeddings.word_embeddings.weight
    assert table.grad is not None and np.any(table.grad != 0), "the shared embeddings should learn from L_Disc"
    model.zero_grad()  # sanity: the generator does learn from its own loss
    impl(MOD).replaced_token_detection(model, ids, mask, rng=np.random.default_rng(3))["mlm_loss"].backward()
    assert all(p.grad is not None for p in gen_only), "L_MLM should reach every generator parameter"


# ---------------------------------------------------------------- tie_embeddings

def _pair(seed=0, **kw):
    cfg = _config(**kw)
    rng = np.random.default_rng(seed)
    return cfg, ElectraGenerator(cfg, rng=rng), ElectraDiscriminator(cfg, rng=rng)


@pytest.mark.task7_2
@pytest.mark.points(2)
def test_tie_shares_the_embedding_parameters_themselves(impl):
    for kw in ({}, {"embedding_size": 8}):
        cfg, gen, disc = _pair(**kw)
        before = {id(p) for p in gen.parameters()} | {id(p) for p in disc.parameters()}
        result = impl(MOD).tie_embeddings(gen, disc)
        assert result is None, \
            f"tie_embeddings changes the two models in place and returns None, got {type(result).__name__}"
        g = dict(gen.embeddings.named_parameters())
        d = dict(disc.embeddings.named_parameters())
        assert g.keys() == d.keys(), \
            ("after tying, the generator and the discriminator must have the same embedding parameters, "
             f"got {sorted(g)} and {sorted(d)}")
        for name in d:
            assert g[name] is d[name], f"generator embeddings.{name} is not the discriminator's Parameter (a copy?)"
        assert gen.lm_head.decoder.weight is disc.embeddings.word_embeddings.weight, \
            "the generator's tied decoder must read the shared word table"
        after = {id(p) for p in gen.parameters()} | {id(p) for p in disc.parameters()}
        assert len(after) == len(before) - len(d), "the generator's own embedding tables should be gone"


@pytest.mark.task7_2
@pytest.mark.points(2)
def test_both_losses_update_one_table(impl):
    from minilm.models.electra import replaced_token_detection
    cfg, gen, disc = _pair(seed=1)
    impl(MOD).tie_embeddings(gen, disc)
    holder = types.SimpleNamespace(generator=gen, discriminator=disc, config=cfg)
    ids, mask = _batch(seed=4)
    table = disc.embeddings.word_embeddings.weight
    grads = []
    for part in ("mlm_loss", "disc_loss"):
        for p in list(gen.parameters()) + list(disc.parameters()):
            p.grad = None
        out = replaced_token_detection(holder, ids, mask, rng=np.random.default_rng(5))
        out[part].backward()
        assert table.grad is not None and np.any(table.grad != 0), f"{part} does not reach the shared word table"
        grads.append(table.grad.copy())
    old = table.data.copy()
    table.data -= 0.5 * (grads[0] + grads[1])                    # one SGD step on L_MLM + L_Disc
    assert np.array_equal(gen.embeddings.word_embeddings.weight.data, table.data), \
        "after an update the generator still reads the old table"
    assert not np.array_equal(old, table.data), "test set-up: the SGD step on the shared table should change it"
