"""autograd.optim: the update rules against hand-computed steps, gradient clipping, schedules, and
optimizer checkpoints that resume exactly."""
from functools import partial

import numpy as np
import pytest

from autograd import CheckpointError, ConfigError, TrainingError, nn, optim
import autograd.functional as F


def param(values, dtype=np.float64):
    return nn.Parameter(np.array(values, dtype=dtype))


def run(opt, p, grads):
    """Apply one step per gradient in ``grads`` to the single parameter ``p``; return p after each."""
    out = []
    for g in grads:
        p.grad = np.array(g, dtype=p.dtype)
        opt.step()
        out.append(p.data.copy())
    return out


# ---- the update rules ---------------------------------------------------------------------------
def test_adamw_first_steps_equal_the_decoupled_formula():
    # lr η = 0.1, λ = 0.1, β = (0.9, 0.999), θ₀ = (1, −2), g₁ = (0.5, −1), g₂ = (0.1, 0.3).
    # Step 1: θ ← 0.99·θ₀ = (0.99, −1.98); m̂ = g₁, v̂ = g₁², so the Adam step is η·g/|g| = ±0.1:
    #         θ₁ = (0.89, −1.88).
    # Step 2: θ ← 0.99·θ₁ = (0.8811, −1.8612); m = (0.055, −0.06), v = (0.00025975, 0.001089),
    #         m̂ = m/0.19, v̂ = v/0.001999, θ₂ = θ − 0.1·m̂/(√v̂ + ε) = (0.800796, −1.818415).
    p = param([1.0, -2.0])
    opt = optim.AdamW([p], lr=0.1, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1)
    p1, p2 = run(opt, p, [[0.5, -1.0], [0.1, 0.3]])
    np.testing.assert_allclose(p1, [0.89, -1.88], atol=1e-7)
    np.testing.assert_allclose(p2, [0.8007959063646517, -1.8184151424192265], rtol=1e-12)
    assert opt.state[p]["step"] == 2
    np.testing.assert_allclose(opt.state[p]["exp_avg"], [0.055, -0.06], rtol=1e-12)
    np.testing.assert_allclose(opt.state[p]["exp_avg_sq"], [0.00025975, 0.001089], rtol=1e-12)


def test_adam_weight_decay_is_l2_in_the_gradient_not_adamw():
    # Adam: g ← g + λθ = (0.6, −1.2); the first step is still ±η: θ₁ = (0.9, −1.9) — no shrinking.
    p = param([1.0, -2.0])
    opt = optim.Adam([p], lr=0.1, weight_decay=0.1)
    p1, p2 = run(opt, p, [[0.5, -1.0], [0.1, 0.3]])
    np.testing.assert_allclose(p1, [0.9, -1.9], atol=1e-7)
    np.testing.assert_allclose(p2, [0.8136483454297575, -1.8400703555381717], rtol=1e-12)
    q = param([1.0, -2.0])
    q1, _ = run(optim.AdamW([q], lr=0.1, weight_decay=0.1), q, [[0.5, -1.0], [0.1, 0.3]])
    assert np.abs(p1 - q1).min() > 5e-3


def test_adam_and_adamw_agree_without_weight_decay():
    rng = np.random.default_rng(0)
    grads = rng.standard_normal((5, 3))
    p, q = param(np.ones(3)), param(np.ones(3))
    a = run(optim.Adam([p], lr=0.01), p, grads)
    b = run(optim.AdamW([q], lr=0.01, weight_decay=0.0), q, grads)
    np.testing.assert_array_equal(a, b)


def test_sgd_momentum_formula():
    # η = 0.1, μ = 0.9, g = 1 each step: b = 1, 1.9, 2.71 → θ = 0.9, 0.71, 0.439
    p = param([1.0])
    steps = run(optim.SGD([p], lr=0.1, momentum=0.9), p, [[1.0]] * 3)
    np.testing.assert_allclose(np.concatenate(steps), [0.9, 0.71, 0.439], rtol=1e-12)
    # with λ = 0.5: g₁ = 1 + 0.5·1 = 1.5 → θ = 0.85; g₂ = 1 + 0.425 = 1.425, b = 1.35 + 1.425 → θ = 0.5725
    q = param([1.0])
    steps = run(optim.SGD([q], lr=0.1, momentum=0.9, weight_decay=0.5), q, [[1.0]] * 2)
    np.testing.assert_allclose(np.concatenate(steps), [0.85, 0.5725], rtol=1e-12)
    r = param([1.0])  # plain SGD
    np.testing.assert_allclose(run(optim.SGD([r], lr=0.1), r, [[2.0]])[0], [0.8])


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
                                  lambda ps: optim.Adam(ps, weight_decay=0.01),
                                  lambda ps: optim.AdamW(ps)])
def test_steps_keep_float32_and_skip_missing_gradients(make):
    p, unused = param(np.ones((2, 3)), np.float32), param(np.ones(4), np.float32)
    opt = make([p, unused])
    p.grad = np.full((2, 3), 0.5, dtype=np.float64)  # a float64 gradient must not promote p
    opt.step()
    assert p.dtype == np.float32 and (p.data != 1).all()
    np.testing.assert_array_equal(unused.data, np.ones(4))  # no gradient: not even decayed
    opt.zero_grad()
    assert p.grad is None


def test_param_groups_exclude_weight_decay():
    w, b = param(np.ones((2, 2))), param(np.ones(2))
    opt = optim.AdamW([{"params": [w], "weight_decay": 0.1}, {"params": [b], "weight_decay": 0.0}], lr=0.5)
    w.grad, b.grad = np.zeros((2, 2)), np.zeros(2)  # zero gradient: only the decay moves anything
    opt.step()
    np.testing.assert_allclose(w.data, 0.95)  # θ(1 − ηλ)
    np.testing.assert_array_equal(b.data, 1.0)
    assert opt.param_groups[0]["lr"] == opt.param_groups[1]["lr"] == 0.5


def test_bad_configuration_is_refused():
    p = param([1.0])
    with pytest.raises(ConfigError, match="weight_deacy"):
        optim.AdamW([{"params": [p], "weight_deacy": 0.0}])
    with pytest.raises(ConfigError, match="twice"):
        optim.SGD([p, p], lr=0.1)
    with pytest.raises(ConfigError, match="lr"):
        optim.SGD([p], lr=-1.0)
    with pytest.raises(ConfigError, match="betas"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ConfigError, match="empty"):
        optim.Adam([])
    with pytest.raises(ConfigError, match="list"):
        optim.Adam(p)


# ---- clipping -----------------------------------------------------------------------------------
def test_clip_grad_norm_scales_to_max_norm_and_returns_the_old_norm():
    a, b, c = param(np.zeros(2), np.float32), param(np.zeros(1), np.float32), param(np.zeros(3))
    a.grad, b.grad = np.array([3.0, 4.0], np.float32), np.array([12.0], np.float32)  # ‖g‖ = 13
    total = optim.clip_grad_norm_([a, b, c], max_norm=1.0)  # c has no gradient: skipped
    assert total == pytest.approx(13.0)
    new_norm = np.sqrt(np.sum(a.grad.astype(np.float64) ** 2) + np.sum(b.grad.astype(np.float64) ** 2))
    assert new_norm == pytest.approx(1.0, rel=1e-5)
    np.testing.assert_allclose(a.grad, np.array([3, 4]) / 13, rtol=1e-5)  # direction kept
    assert a.grad.dtype == np.float32 and c.grad is None


def test_clip_grad_norm_leaves_small_gradients_alone():
    a = param(np.zeros(2))
    a.grad = np.array([0.3, 0.4])
    assert optim.clip_grad_norm_(a, max_norm=1.0) == pytest.approx(0.5)
    np.testing.assert_array_equal(a.grad, [0.3, 0.4])
    a.grad = np.array([np.inf, 0.0])
    with pytest.raises(TrainingError):
        optim.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)


# ---- schedules ----------------------------------------------------------------------------------
def test_warmup_linear_values():
    f = partial(optim.warmup_linear, warmup=10, total=110)
    assert [f(s) for s in (0, 5, 10, 60, 100, 110, 200)] == pytest.approx([0, 0.5, 1, 0.5, 0.1, 0, 0])


def test_warmup_cosine_values():
    f = partial(optim.warmup_cosine, warmup=10, total=110)
    # step 35: a quarter of the decay, ½(1 + cos(π/4)) = 0.853553...
    assert [f(s) for s in (0, 5, 10, 35, 60, 110, 200)] == pytest.approx(
        [0, 0.5, 1, 0.8535533905932737, 0.5, 0, 0])
    g = partial(optim.warmup_cosine, warmup=10, total=110, min_ratio=0.1)
    assert [g(s) for s in (10, 60, 110, 500)] == pytest.approx([1, 0.55, 0.1, 0.1])
    assert optim.warmup_cosine(0, 0, 100) == 1.0  # no warm-up: start at the full rate
    assert optim.warmup_constant(5, 10) == 0.5 and optim.warmup_constant(50, 10) == 1.0
    with pytest.raises(ConfigError):
        optim.warmup_cosine(0, 20, 10)


def test_lambda_lr_sets_each_group_lr():
    a, b = param([1.0]), param([1.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=1.0)
    sched = optim.LambdaLR(opt, partial(optim.warmup_linear, warmup=2, total=4))
    seen = [sched.get_last_lr()]
    for _ in range(4):
        opt.step()
        sched.step()
        seen.append(sched.get_last_lr())
    assert seen == [[0, 0], [0.5, 0.25], [1.0, 0.5], [0.5, 0.25], [0, 0]]


# ---- checkpoints --------------------------------------------------------------------------------
def _setup(seed):
    rng = np.random.default_rng(seed)
    model = nn.Sequential(nn.Linear(3, 8, rng=rng), nn.GELU(), nn.Linear(8, 2, rng=rng))
    decay = [p for n, p in model.named_parameters() if n.endswith("weight")]
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias")]
    opt = optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}], lr=0.05)
    sched = optim.LambdaLR(opt, partial(optim.warmup_cosine, warmup=2, total=10))
    return model, opt, sched


def _train(model, opt, sched, steps, data_rng):
    for _ in range(steps):
        x = data_rng.standard_normal((16, 3)).astype(np.float32)
        y = (x[:, 0] > 0).astype(np.int64)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        sched.step()
        opt.zero_grad()


def test_optimizer_state_dict_round_trip_resumes_exactly(tmp_path):
    model, opt, sched = _setup(0)
    _train(model, opt, sched, 3, np.random.default_rng(1))
    path = tmp_path / "ckpt.npz"
    np.savez(path, **{f"model.{k}": v for k, v in model.state_dict().items()},
             **{f"optim.{k}": v for k, v in opt.state_dict().items()},
             **{f"sched.{k}": v for k, v in sched.state_dict().items()})
    _train(model, opt, sched, 4, np.random.default_rng(2))  # the uninterrupted run

    resumed, opt2, sched2 = _setup(5)  # different init: everything must come from the file
    with np.load(path, allow_pickle=False) as ckpt:
        part = lambda prefix: {k[len(prefix):]: ckpt[k] for k in ckpt.files if k.startswith(prefix)}  # noqa: E731
        resumed.load_state_dict(part("model."))
        opt2.load_state_dict(part("optim."))
        sched2.load_state_dict(part("sched."))
    assert opt2.step_count == 3 and sched2.last_step == 3
    _train(resumed, opt2, sched2, 4, np.random.default_rng(2))
    for (name, v), v2 in zip(model.state_dict().items(), resumed.state_dict().values()):
        np.testing.assert_array_equal(v, v2, err_msg=name)
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]


@pytest.mark.parametrize("shape", [(3,), ()])  # () : a scalar parameter, e.g. a learned temperature
def test_sgd_momentum_state_round_trip(shape):
    p = param(np.ones(shape))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    run(opt, p, [np.full(shape, 2.0)])
    q = param(p.data)
    opt2 = optim.SGD([q], lr=0.1, momentum=0.9)
    opt2.load_state_dict(opt.state_dict())
    assert opt2.state[q]["momentum_buffer"].shape == shape
    np.testing.assert_array_equal(run(opt, p, [np.full(shape, 0.5)])[0], run(opt2, q, [np.full(shape, 0.5)])[0])


def test_optimizer_load_state_dict_errors_leave_state_untouched():
    p = param(np.ones(3))
    opt = optim.Adam([p])
    run(opt, p, [[1.0, 1.0, 1.0]])
    before = opt.state_dict()
    bad = dict(before)
    del bad["param_groups.0.lr"]
    bad["state.0.exp_avg"] = np.zeros(4)
    bad["state.7.exp_avg"] = np.zeros(3)
    with pytest.raises(CheckpointError) as err:
        opt.load_state_dict(bad)
    for expected in ("param_groups.0.lr", "state.0.exp_avg", "(3,)", "(4,)", "state.7.exp_avg"):
        assert expected in str(err.value), expected
    after = opt.state_dict()
    assert after.keys() == before.keys()
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])
