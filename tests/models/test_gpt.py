"""minilm.models.gpt: causality, the tied output, GPT-2's init, training, generation, errors."""
import math

import numpy as np
import pytest

import autograd.functional as F
from autograd import optim
from autograd.errors import ConfigError, ShapeError
from minilm.models.gpt import GPT, GPTConfig

TINY = dict(vocab_size=11, block_size=12, n_layer=2, n_head=2, n_embd=16)


@pytest.fixture
def model():
    return GPT(GPTConfig(**TINY), rng=np.random.default_rng(0))


def test_forward_shapes_and_loss(model):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 11, size=(3, 7))
    y = rng.integers(0, 11, size=(3, 7))
    logits, loss = model(x)
    assert logits.shape == (3, 7, 11) and loss is None and logits.dtype == np.float32
    logits, loss = model(x, labels=y)                        # labels aligned with x: shifted inside
    np.testing.assert_allclose(loss.item(), F.cross_entropy(logits[:, :-1], y[:, 1:]).item(), rtol=1e-6)
    y[:, :3] = -100                                           # e.g. a prompt: not predicted
    _, masked = model(x, labels=y)
    np.testing.assert_allclose(masked.item(), F.cross_entropy(logits[:, 2:-1], y[:, 3:]).item(), rtol=1e-6)


def test_no_future_leakage_bit_for_bit(model):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 11, size=(2, 10))
    logits = model(x)[0].data
    for t in (0, 4, 8):
        x2 = x.copy()
        x2[:, t + 1:] = rng.integers(0, 11, size=(2, 10 - t - 1))
        logits2 = model(x2)[0].data
        np.testing.assert_array_equal(logits2[:, :t + 1], logits[:, :t + 1])
    assert not np.allclose(logits2[:, -1], logits[:, -1])


def test_the_loss_is_task_4_1s_slot_on_the_model_path(model):
    """One code path: ``model(ids, labels=ids)`` calls Task 4.1's ``causal_lm_loss`` (no second copy
    of the shifted cross-entropy in the model), and ``lm_loss`` is that same call."""
    from autograd import tasks
    seq = np.random.default_rng(3).integers(0, 11, size=(2, 9))
    with tasks.trace() as seen:
        logits, loss = model(seq, labels=seq)
    assert ("task04_gpt.loss", "causal_lm_loss") in seen
    assert model.lm_loss(seq).item() == loss.item()
    np.testing.assert_allclose(loss.item(), F.cross_entropy(logits[:, :-1], seq[:, 1:]).item(), rtol=1e-6)


def test_output_layer_is_tied_to_the_token_embedding(model):
    names = [n for n, _ in model.named_parameters()]
    assert names[:2] == ["wte.weight", "wpe.weight"] and names[-2:] == ["ln_f.weight", "ln_f.bias"]
    assert not any("lm_head" in n for n in names)
    C, V, T, L = 16, 11, 12, 2
    per_block = 4 * (C * C + C) + 2 * C * 4 * C + 4 * C + C + 2 * 2 * C
    assert model.num_parameters() == V * C + T * C + L * per_block + 2 * C
    # a token absent from the input still gets a gradient: through the output layer, i.e. wte
    x = np.array([[1, 2, 3, 4]])
    model.zero_grad()
    model(x, labels=x)[1].backward()
    assert np.abs(model.wte.weight.grad[7]).sum() > 0


def test_gpt2_initialisation():
    cfg = GPTConfig(vocab_size=50, block_size=16, n_layer=3, n_head=2, n_embd=64)
    m = GPT(cfg, rng=np.random.default_rng(4))
    params = dict(m.named_parameters())
    np.testing.assert_allclose(params["wte.weight"].data.std(), 0.02, rtol=0.05)
    np.testing.assert_allclose(params["blocks.0.attn.q_proj.weight"].data.std(), 0.02, rtol=0.05)
    residual = 0.02 / math.sqrt(2 * 3)
    np.testing.assert_allclose(params["blocks.1.attn.out_proj.weight"].data.std(), residual, rtol=0.05)
    np.testing.assert_allclose(params["blocks.2.mlp.fc2.weight"].data.std(), residual, rtol=0.05)
    assert not params["blocks.0.mlp.fc1.bias"].data.any()
    a = GPT(cfg).state_dict()
    b = GPT(cfg).state_dict()
    assert all(np.array_equal(a[k], b[k]) for k in a), "the same config (seed) gives the same model"


def test_state_dict_round_trip(model):
    other = GPT(GPTConfig(**TINY, seed=5))
    x = np.array([[1, 2, 3]])
    assert not np.allclose(other(x)[0].data, model(x)[0].data)
    other.load_state_dict(model.state_dict())
    np.testing.assert_array_equal(other(x)[0].data, model(x)[0].data)
    assert GPTConfig.from_dict(model.config.to_dict()) == model.config


def test_trains_on_a_repeated_sequence():
    cfg = GPTConfig(vocab_size=8, block_size=8, n_layer=1, n_head=2, n_embd=16)
    m = GPT(cfg, rng=np.random.default_rng(6))
    stream = np.tile([3, 1, 4, 1, 5, 2, 6, 7], 4)
    x = np.stack([stream[i:i + 8] for i in range(4)])
    opt = optim.AdamW(m.parameters(), lr=1e-2)
    losses = []
    for _ in range(50):
        _, loss = m(x, labels=x)
        m.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[0] > 1.8 and losses[-1] < 0.2 * losses[0], losses[::10]
    out = m.generate(np.array([3, 1, 4]), 8, greedy=True)
    # after "1" comes 4 or 5: only the context before it tells which, so this needs attention
    assert out[:3].tolist() == [3, 1, 4] and out.shape == (11,)
    assert (out[3:] == stream[3:11]).mean() >= 0.75


def test_generate_shapes_modes_and_reproducibility(model):
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    g1 = model.generate(prompt, 5, greedy=True)
    assert g1.shape == (2, 8) and np.array_equal(g1[:, :3], prompt)
    manual = prompt.copy()
    for _ in range(5):
        nxt = model(manual[:, -12:])[0].data[:, -1].argmax(-1)
        manual = np.concatenate([manual, nxt[:, None]], axis=1)
    np.testing.assert_array_equal(g1, manual)
    s1 = model.generate(prompt, 6, rng=np.random.default_rng(7), top_k=3, temperature=0.7)
    s2 = model.generate(prompt, 6, rng=np.random.default_rng(7), top_k=3, temperature=0.7)
    np.testing.assert_array_equal(s1, s2)
    assert model.generate(prompt[0], 2, greedy=True).shape == (5,)
    long = model.generate(prompt, 20, greedy=True)              # beyond block_size 12: a sliding window
    assert long.shape == (2, 23)
    model.train()
    model.generate(prompt, 1, greedy=True)
    assert model.training and model.blocks[0].attn.training, "generate restores the training mode"


def test_generate_stops_at_eos(model):
    prompt = np.array([[1, 2], [3, 4]])
    plain = model.generate(prompt, 6, greedy=True)
    eos = int(plain[0, 2])                                       # the first greedy token of row 0
    out = model.generate(prompt, 6, greedy=True, eos_id=eos)
    assert out[0, 2] == eos and np.all(out[0, 2:] == eos)
    first = np.flatnonzero(plain[1, 2:] == eos)
    if first.size:
        assert np.all(out[1, 2 + first[0]:] == eos)


def test_beam_search_with_one_beam_is_greedy(model):
    prompt = np.array([1, 2, 3])
    greedy = model.generate(prompt, 5, greedy=True)
    (score, ids), = model.beam_search(prompt, num_beams=1, max_new_tokens=5)
    np.testing.assert_array_equal(ids, greedy)
    assert score < 0
    beams = model.beam_search(prompt, num_beams=3, max_new_tokens=4)
    assert len(beams) == 3 and beams[0][0] >= beams[1][0] >= beams[2][0]
    assert len({tuple(b[1]) for b in beams}) == 3


def test_errors_name_what_was_wrong(model):
    with pytest.raises(ShapeError, match=r"13.*12"):
        model(np.zeros((1, 13), dtype=int))
    with pytest.raises(ShapeError, match="id 11"):
        model(np.array([[1, 11]]))
    with pytest.raises(ShapeError, match="id -1"):
        model(np.array([[1, -1]]))
    with pytest.raises(ShapeError, match=r"\(B, T\)"):
        model(np.array([1, 2]))
    with pytest.raises(ShapeError, match=r"13.*12"):
        model.generate(np.zeros(13, dtype=int), 1, greedy=True)
    with pytest.raises(ConfigError, match="rng"):
        model.generate(np.array([1]), 1)
    with pytest.raises(ConfigError):
        GPTConfig(n_embd=30, n_head=4)
    with pytest.raises(ConfigError):
        GPTConfig(n_layer=0)
    with pytest.raises(ConfigError):
        GPTConfig(dropout=1.0)
    with pytest.raises(ConfigError, match="unknown"):
        GPTConfig.from_dict({"n_layers": 3})


# ---- minilm generate ------------------------------------------------------------------------------

@pytest.fixture
def checkpoint(tmp_path):
    from minilm.checkpoint import model_meta, save_checkpoint
    from minilm.tokenizers import CharTokenizer
    tok = CharTokenizer.from_texts(["cats eat fish. dogs eat meat."])
    cfg = GPTConfig(vocab_size=tok.vocab_size, block_size=16, n_layer=1, n_head=2, n_embd=16)
    m = GPT(cfg, rng=np.random.default_rng(8))
    path = save_checkpoint(tmp_path / "checkpoint.npz", model=m, tokenizer=tok,
                           meta={"family": "gpt", **model_meta(m, cfg)})
    return str(path), m, tok


def _run(capsys, *argv):
    import json

    from minilm.cli import main
    code = main(["generate", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if "--json" in argv and code == 0 else out), err


def test_generate_command(checkpoint, capsys):
    path, m, tok = checkpoint
    code, out, _ = _run(capsys, path, "--prompt", "cats", "--greedy", "--max-new-tokens", "6", "--no-stop", "--json")
    assert code == 0 and out["prompt_ids"] == tok.encode("cats")
    want = m.generate(np.array(tok.encode("cats")), 6, greedy=True)[4:].tolist()
    assert out["completions"][0]["ids"] == want
    assert out["completions"][0]["text"] == tok.decode(tok.encode("cats") + want)
    code, a, _ = _run(capsys, path, "--prompt", "dogs", "--top-k", "3", "--top-p", "0.9", "--seed", "3",
                      "--num-samples", "2", "--json")
    code, b, _ = _run(capsys, path, "--prompt", "dogs", "--top-k", "3", "--top-p", "0.9", "--seed", "3",
                      "--num-samples", "2", "--json")
    assert code == 0 and a == b and len(a["completions"]) == 2
    code, beams, _ = _run(capsys, path, "--prompt", "eat", "--beams", "3", "--max-new-tokens", "4", "--json")
    assert code == 0 and len(beams["completions"]) == 3
    assert all(c["ids"][-1] == tok.sep_id or len(c["ids"]) == 4 for c in beams["completions"])
    code, text, err = _run(capsys, path, "--prompt", "fish", "--max-new-tokens", "3")
    assert code == 0 and text.startswith("fish")
    assert "decoding: sample, temperature 1.0, seed 0, at most 3 new tokens" in err


def test_generate_prints_its_settings_as_words(checkpoint, capsys):
    path, _, _ = checkpoint
    for argv, want in [
            (["--top-k", "5", "--top-p", "0.9", "--temperature", "0.7", "--seed", "2"],
             "decoding: sample, temperature 0.7, top-k 5, top-p 0.9, seed 2, at most 4 new tokens"),
            (["--greedy"], "decoding: greedy, at most 4 new tokens"),
            (["--beams", "3", "--length-penalty", "0.6"],
             "decoding: beam search, 3 beams, length penalty 0.6, at most 4 new tokens")]:
        code, _, err = _run(capsys, path, "--prompt", "cats", "--max-new-tokens", "4", *argv)
        assert code == 0 and want in err.splitlines(), err
        assert "{" not in err and "'method'" not in err


def test_generate_command_rejects_a_prompt_longer_than_the_context(checkpoint, capsys):
    path, _, _ = checkpoint
    code, _, err = _run(capsys, path, "--prompt", "cats eat fish. dogs", "--greedy")
    assert code == 1 and "19" in err and "16" in err
