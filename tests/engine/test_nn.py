"""autograd.nn: registration and dotted names, state_dict / load_state_dict, modes, and the layers
(values against NumPy, gradients against central differences in float64)."""
import copy

import numpy as np
import pytest

from autograd import CheckpointError, ConfigError, MiniLMError, ShapeError, Tensor, gradcheck, nn
import autograd.functional as F


class Block(nn.Module):
    def __init__(self, d, *, rng):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.attn = nn.Linear(d, d, rng=rng)
        self.drop = nn.Dropout(0.5, rng=rng)
        self.register_buffer("mask", np.tril(np.ones((3, 3), dtype=bool)))
        self.register_buffer("cache", np.zeros(2), persistent=False)

    def forward(self, x):
        return x + self.drop(self.attn(self.ln(x)))


class Tiny(nn.Module):
    def __init__(self, *, rng, V=7, d=4, n_layer=2):
        super().__init__()
        self.wte = nn.Embedding(V, d, rng=rng, init_std=0.02)
        self.blocks = nn.ModuleList([Block(d, rng=rng) for _ in range(n_layer)])
        self.head = nn.Linear(d, 3, bias=False, rng=rng)

    def forward(self, ids):
        h = self.wte(ids)
        for block in self.blocks:
            h = block(h)
        return self.head(h)


def make(seed=0, **kw):
    return Tiny(rng=np.random.default_rng(seed), **kw)


# ---- registration and names ---------------------------------------------------------------------
def test_named_parameters_follow_pytorch_dotted_names():
    names = [n for n, _ in make().named_parameters()]
    assert names == ["wte.weight",
                     "blocks.0.ln.weight", "blocks.0.ln.bias", "blocks.0.attn.weight", "blocks.0.attn.bias",
                     "blocks.1.ln.weight", "blocks.1.ln.bias", "blocks.1.attn.weight", "blocks.1.attn.bias",
                     "head.weight"]


def test_parameters_modules_children_and_counts():
    m = make()
    params = m.parameters()
    assert isinstance(params, list) and all(isinstance(p, nn.Parameter) for p in params)
    assert params == m.parameters()  # a list: reading it twice gives the same thing
    assert [type(c).__name__ for c in m.children()] == ["Embedding", "ModuleList", "Linear"]
    assert len(m.modules()) == 1 + 1 + 1 + 2 * 4 + 1  # self, wte, list, 2 × (block, ln, attn, drop), head
    assert m.num_parameters() == 7 * 4 + 2 * (4 + 4 + 16 + 4) + 3 * 4
    m.wte.requires_grad_(False)
    assert m.num_parameters(trainable_only=True) == m.num_parameters() - 28


def test_parameter_is_a_trainable_copy():
    a = np.ones(3, dtype=np.float32)
    p = nn.Parameter(a)
    assert isinstance(p, Tensor) and p.requires_grad and p.dtype == np.float32
    p.data += 1
    assert a[0] == 1.0  # the caller's array is untouched
    assert nn.Parameter(np.zeros(2), dtype=np.float32).dtype == np.float32


def test_tied_parameter_listed_once_but_saved_under_both_names():
    m = make()
    m.head.weight = m.wte.weight  # tie (registration does not look at shapes)
    names = [n for n, _ in m.named_parameters()]
    assert "head.weight" not in names and "wte.weight" in names
    sd = m.state_dict()
    assert "head.weight" in sd and "wte.weight" in sd


def test_reassigning_or_deleting_an_attribute_updates_the_registry():
    m = make()
    m.head = None
    assert not any(n.startswith("head") for n, _ in m.named_parameters())
    del m.blocks
    assert [n for n, _ in m.named_parameters()] == ["wte.weight"]


def test_forgetting_super_init_is_a_clear_error():
    class Broken(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2, rng=np.random.default_rng(0))

    with pytest.raises(MiniLMError, match="super\\(\\).__init__"):
        Broken()


def test_module_list_and_sequential():
    rng = np.random.default_rng(0)
    layers = nn.ModuleList([nn.Linear(2, 2, rng=rng) for _ in range(3)])
    assert len(layers) == 3 and layers[-1] is layers[2] and len(layers[1:]) == 2
    with pytest.raises(IndexError):
        layers[3]
    with pytest.raises(ConfigError):
        layers.append("not a module")
    seq = nn.Sequential(nn.Linear(2, 5, rng=rng), nn.ReLU(), nn.Linear(5, 1, rng=rng))
    x = rng.standard_normal((4, 2)).astype(np.float32)
    expected = seq[2](seq[1](seq[0](x))).data
    np.testing.assert_array_equal(seq(x).data, expected)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert "(1): ReLU()" in repr(seq)


def test_deepcopy_gives_independent_parameters():
    m = make()
    c = copy.deepcopy(m)
    c.wte.weight.data += 1.0
    assert not np.allclose(c.wte.weight.data, m.wte.weight.data)
    assert [n for n, _ in c.named_parameters()] == [n for n, _ in m.named_parameters()]


# ---- state_dict / load_state_dict ---------------------------------------------------------------
def test_state_dict_round_trip():
    a, b = make(0), make(1)
    ids = np.array([[0, 3, 6]])
    a.eval(), b.eval()
    assert not np.allclose(a(ids).data, b(ids).data)
    sd = a.state_dict()
    assert list(sd) == ["wte.weight", "blocks.0.mask", "blocks.0.ln.weight", "blocks.0.ln.bias",
                        "blocks.0.attn.weight", "blocks.0.attn.bias", "blocks.1.mask", "blocks.1.ln.weight",
                        "blocks.1.ln.bias", "blocks.1.attn.weight", "blocks.1.attn.bias", "head.weight"]
    assert all(isinstance(v, np.ndarray) for v in sd.values())
    b.load_state_dict(sd)
    np.testing.assert_array_equal(a(ids).data, b(ids).data)
    sd["wte.weight"][...] = 0  # a copy: changing it does not change the model
    assert a.wte.weight.data.any()


def test_load_casts_to_the_parameter_dtype_in_place():
    m = make()
    p = m.wte.weight
    sd = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in make(1).state_dict().items()}
    m.load_state_dict(sd)
    assert m.wte.weight is p and p.dtype == np.float32
    np.testing.assert_array_equal(p.data, sd["wte.weight"].astype(np.float32))


def test_load_state_dict_names_every_problem_and_changes_nothing():
    m = make()
    before = m.state_dict()
    sd = make(1).state_dict()
    del sd["blocks.1.attn.bias"]
    del sd["head.weight"]
    sd["blocks.2.attn.weight"] = np.zeros((4, 4), np.float32)
    sd["blocks.0.attn.weight"] = np.zeros((4, 5), np.float32)
    with pytest.raises(CheckpointError) as err:
        m.load_state_dict(sd)
    msg = str(err.value)
    for expected in ("missing", "blocks.1.attn.bias", "head.weight", "unexpected", "blocks.2.attn.weight",
                     "blocks.0.attn.weight", "(4, 4)", "(4, 5)"):
        assert expected in msg, expected
    after = m.state_dict()  # never half-loaded: wte.weight was fine but must not have been copied
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])


def test_load_state_dict_non_strict_and_shape_errors():
    m = make()
    sd = make(1).state_dict()
    del sd["head.weight"]
    sd["extra"] = np.zeros(2)
    missing, unexpected = m.load_state_dict(sd, strict=False)
    assert missing == ["head.weight"] and unexpected == ["extra"]
    np.testing.assert_array_equal(m.wte.weight.data, sd["wte.weight"])
    sd["wte.weight"] = np.zeros((8, 4))
    with pytest.raises(CheckpointError, match="wte.weight"):
        m.load_state_dict(sd, strict=False)  # a shape mismatch is never allowed


def test_buffers_are_saved_but_not_trained():
    m = make()
    assert all(p.requires_grad for p in m.parameters())
    assert [n for n, _ in m.named_buffers()] == ["blocks.0.mask", "blocks.0.cache",
                                                 "blocks.1.mask", "blocks.1.cache"]
    assert "blocks.0.cache" not in m.state_dict()  # non-persistent
    sd = m.state_dict()
    sd["blocks.0.mask"] = np.zeros((3, 3), bool)
    m.load_state_dict(sd)
    assert not m.blocks[0].mask.any() and m.blocks[1].mask.any()


# ---- modes and gradients ------------------------------------------------------------------------
def test_train_eval_propagate_and_control_dropout():
    m = make()
    assert all(mod.training for mod in m.modules())
    assert m.eval() is m
    assert not any(mod.training for mod in m.modules())
    x = np.ones((2, 3, 4), np.float32)
    drop = m.blocks[0].drop
    np.testing.assert_array_equal(drop(x).data, x)
    m.train()
    assert all(mod.training for mod in m.modules())
    out = drop(x).data
    assert set(np.unique(out)) <= {0.0, 2.0} and (out == 0).any()


def test_zero_grad_and_call_runs_forward():
    m = make()
    m(np.array([[1, 2]])).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    with pytest.raises(NotImplementedError):
        nn.Module()(1)


def test_to_float64_keeps_parameter_identity():
    m = make()
    p = m.head.weight
    m.to(np.float64)
    assert m.head.weight is p and p.dtype == np.float64 and m.blocks[0].mask.dtype == bool


# ---- layers -------------------------------------------------------------------------------------
def test_linear_matches_numpy_and_pytorch_shapes():
    rng = np.random.default_rng(0)
    lin = nn.Linear(5, 3, rng=rng)
    assert lin.weight.shape == (3, 5) and lin.bias.shape == (3,) and lin.weight.dtype == np.float32
    x = rng.standard_normal((2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(lin(x).data, x @ lin.weight.data.T + lin.bias.data, rtol=1e-6)
    no_bias = nn.Linear(5, 3, bias=False, rng=rng)
    assert no_bias.bias is None and list(no_bias.state_dict()) == ["weight"]
    np.testing.assert_allclose(no_bias(x).data, x @ no_bias.weight.data.T, rtol=1e-6)
    with pytest.raises(ShapeError, match="5"):
        lin(np.ones((2, 4)))


def test_linear_init_bounds_and_std_option():
    rng = np.random.default_rng(0)
    lin = nn.Linear(64, 256, rng=rng)
    bound = 1 / 8
    for p in (lin.weight.data, lin.bias.data):
        assert np.abs(p).max() <= bound and np.abs(p).max() > 0.95 * bound
    np.testing.assert_allclose(lin.weight.data.std(), bound / np.sqrt(3), rtol=0.05)  # std of U(−b, b)
    gpt = nn.Linear(64, 256, rng=rng, init_std=0.02)
    np.testing.assert_allclose(gpt.weight.data.std(), 0.02, rtol=0.05)
    assert not gpt.bias.data.any()


def test_random_init_requires_a_generator_and_is_reproducible():
    with pytest.raises(TypeError):
        nn.Linear(2, 2)  # rng is a required keyword
    with pytest.raises(ConfigError, match="Generator"):
        nn.Embedding(3, 2, rng=0)
    with pytest.raises(ConfigError):
        nn.Dropout(0.1)
    np.testing.assert_array_equal(make(3).state_dict()["head.weight"], make(3).state_dict()["head.weight"])


def test_embedding_lookup_and_refuses_out_of_range_ids():
    emb = nn.Embedding(5, 3, rng=np.random.default_rng(0))
    assert emb.weight.shape == (5, 3)
    ids = np.array([[0, 4], [2, 2]])
    np.testing.assert_array_equal(emb(ids).data, emb.weight.data[ids])
    with pytest.raises(MiniLMError, match="5"):
        emb(np.array([1, 5]))
    with pytest.raises(MiniLMError, match="-1"):
        emb(np.array([-1, 0]))  # NumPy would silently give the last row


def test_layer_norm_normalises_the_last_axis():
    rng = np.random.default_rng(0)
    ln = nn.LayerNorm(6)
    assert (ln.weight.data == 1).all() and (ln.bias.data == 0).all()
    x = rng.standard_normal((2, 3, 6)) * 5 + 2
    ln.weight.data[...] = rng.standard_normal(6)
    ln.bias.data[...] = rng.standard_normal(6)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    expected = (x - mu) / np.sqrt(var + 1e-5) * ln.weight.data + ln.bias.data
    np.testing.assert_allclose(ln(x.astype(np.float32)).data, expected, rtol=1e-4, atol=1e-5)
    with pytest.raises(ShapeError):
        ln(np.ones((2, 5), np.float32))


def test_activation_modules():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    np.testing.assert_array_equal(nn.ReLU()(x).data, np.maximum(x, 0))
    np.testing.assert_allclose(nn.Tanh()(x).data, np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(nn.GELU()(x).data, F.gelu(Tensor(x)).data)
    with pytest.raises(ConfigError):
        nn.GELU("fast")


# ---- gradients in float64 (gradcheck uses a random upstream gradient) --------------------------
def test_gradcheck_linear():
    rng = np.random.default_rng(0)
    lin = nn.Linear(4, 3, rng=rng, dtype=np.float64)
    x = Tensor(rng.standard_normal((2, 5, 4)), requires_grad=True)
    assert gradcheck(lambda x, w, b: lin(x), x, lin.weight, lin.bias, rng=rng)


def test_gradcheck_layer_norm():
    rng = np.random.default_rng(1)
    ln = nn.LayerNorm(5, dtype=np.float64)
    ln.weight.data[...] = rng.standard_normal(5)
    ln.bias.data[...] = rng.standard_normal(5)
    x = Tensor(rng.standard_normal((3, 5)) * 3, requires_grad=True)
    assert gradcheck(lambda x, w, b: ln(x), x, ln.weight, ln.bias, rng=rng)


def test_gradcheck_embedding_with_repeated_ids():
    rng = np.random.default_rng(2)
    emb = nn.Embedding(6, 3, rng=rng, dtype=np.float64)
    ids = np.array([[1, 4, 1], [0, 1, 5]])  # id 1 three times: its gradient rows must add up
    assert gradcheck(lambda w: emb(ids), emb.weight, rng=rng)
