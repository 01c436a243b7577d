"""``minilm plot``: every figure is written as a valid PNG from tiny inputs, and the data behind
each figure (attention maps, masks, corrupted rows) is what it claims to be."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from autograd import tasks
from minilm import cli

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def check_png(path, min_side=200, max_side=4000):
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path} is not a PNG"
    assert len(data) > 5_000, f"{path} is suspiciously small ({len(data)} bytes)"
    width, height = struct.unpack(">II", data[16:24])      # the IHDR chunk
    assert min_side <= width <= max_side and min_side <= height <= max_side, (width, height)
    return width, height


def plot(capsys, *args):
    code = cli.main(["plot", *map(str, args)])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out.strip().splitlines()[-1], err


@pytest.fixture(scope="module")
def gpt_run(tmp_path_factory):
    """A 2-step GPT from ``minilm train gpt``: a checkpoint and history.json, in a few seconds."""
    out = tmp_path_factory.mktemp("runs") / "gpt"
    code = cli.main(["train", "gpt", "--steps", "2", "--docs", "8", "--n-layer", "2", "--n-head", "2",
                     "--n-embd", "16", "--block-size", "16", "--batch-size", "2", "--vocab-size", "80",
                     "--no-progress", "--out", str(out)])
    assert code == 0
    return out


def test_attention_figure(gpt_run, tmp_path, capsys):
    path, _ = plot(capsys, "attention", gpt_run / "checkpoint.npz", "--text", "cats eat fish . dogs drink",
                   "--out", tmp_path / "att.png")
    assert path == str(tmp_path / "att.png")
    check_png(tmp_path / "att.png")


def test_attention_maps_are_causal_probabilities(gpt_run):
    from minilm.checkpoint import load_model
    from minilm.plots.attention import attention_maps, encode_for
    model, tok, _ = load_model(gpt_run / "checkpoint.npz")
    ids = encode_for(model, tok, "cats eat fish . dogs drink water . birds sing songs", causal=True)
    assert 1 < len(ids) <= model.config.block_size
    maps = attention_maps(model, ids)
    assert [name for name, _ in maps] == ["blocks.0.attn", "blocks.1.attn"]
    T = len(ids)
    for _, a in maps:
        assert a.shape == (2, T, T)
        np.testing.assert_allclose(a.sum(-1), 1.0, atol=1e-5)
        assert np.all(np.triu(a, k=1) == 0)             # GPT never looks ahead


def test_masks_figure(tmp_path, capsys):
    path, _ = plot(capsys, "masks", "--out", tmp_path / "masks.png")
    check_png(tmp_path / "masks.png", min_side=600)


def test_mask_panels_hold_the_library_masks():
    from minilm.plots.masks import mask_panels
    panels = {p["title"].split(" (")[0]: p for p in mask_panels(8, 3, rng=np.random.default_rng(0))}
    assert len(panels) == 8
    np.testing.assert_array_equal(panels["causal"]["mask"], np.tril(np.ones((8, 8), bool)))
    assert panels["prefix LM"]["mask"][0, :3].all() and not panels["prefix LM"]["mask"][0, 3:].any()
    assert not panels["padding"]["mask"][:, -2:].any() and panels["padding"]["mask"][:, :-2].all()
    content, query = panels["XLNet content stream"]["mask"], panels["XLNet query stream"]["mask"]
    differ = content ^ query                               # a target sees itself in h, never in g
    assert differ.any() and not (differ & ~np.eye(8, dtype=bool)).any()
    assert not (query & ~content).any()
    assert panels["T5 cross-attention"]["mask"].shape == (5, 6)
    for p in panels.values():
        assert len(p["xlabels"]) == p["mask"].shape[1] and len(p["ylabels"]) == p["mask"].shape[0]


def test_corruption_figure(tmp_path, capsys):
    path, _ = plot(capsys, "corruption", "--text", "cats eat fish. dogs drink water.",
                   "--out", tmp_path / "corruption.png")
    check_png(tmp_path / "corruption.png", min_side=400)


def test_corruption_rows_show_each_family():
    from minilm.plots.corruption import corruption_rows
    text = "cats eat fish. dogs drink water. birds sing songs."
    rows = corruption_rows(text, rng=np.random.default_rng(0))
    labels = [r["label"].split("\n")[0] for r in rows]
    for family in ("BERT", "RoBERTa", "ELECTRA  electra_mask", "ELECTRA  discriminator", "T5", "BART  token masking",
                   "BART  token deletion", "BART  text infilling", "BART  sentence permutation",
                   "BART  document rotation"):
        assert any(l.startswith(family) for l in labels), family
    assert all(not r["note"] and len(r["tokens"]) == len(r["styles"]) for r in rows)
    by = {r["label"].split("\n")[0]: r for r in rows}
    assert "uniform" in by["ELECTRA  discriminator input"]["label"]   # labelled: no real generator
    words = len(text.replace(".", " .").split())
    assert len(by["BART  token deletion"]["tokens"]) == words + 2       # deleted tokens are shown struck out
    assert sorted(by["BART  sentence permutation"]["tokens"]) == sorted(by["BART  input"]["tokens"])
    assert "<extra_id_0>" in by["T5  span_corruption: input"]["tokens"]


def test_figures_survive_unwritten_task_slots(tmp_path):
    """In a student release the slots are stubs: the figures say which task is missing."""
    from minilm.plots.corruption import corruption_figure, corruption_rows
    from minilm.plots.masks import masks_figure, mask_panels
    with tasks.use("exercises"):
        rows = corruption_rows("cats eat fish.", rng=np.random.default_rng(0))
        panels = mask_panels(rng=np.random.default_rng(0))
        check_png(corruption_figure(rows, tmp_path / "c.png"), min_side=150)
        check_png(masks_figure(tmp_path / "m.png", rng=np.random.default_rng(0)))
    assert any("Task 5.2" in r["note"] for r in rows)
    assert any(p["mask"] is None and "Task 8.1" in p["note"] for p in panels)


def test_losses_figure(gpt_run, tmp_path, capsys):
    other = tmp_path / "bert"
    other.mkdir()
    steps = list(range(50))
    other.joinpath("history.json").write_text(json.dumps(
        {"step": steps, "loss": [5.0 * np.exp(-s / 20) + 1 for s in steps], "eval_step": [0, 50],
         "eval_loss": [6.0, 1.5], "eval": []}))
    path, _ = plot(capsys, "losses", gpt_run, other, "--out", tmp_path / "losses.png")
    check_png(tmp_path / "losses.png")


def test_losses_needs_history(tmp_path, capsys):
    assert cli.main(["plot", "losses", str(tmp_path), "--out", str(tmp_path / "x.png")]) == 1
    assert "history.json" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_corruption_with_a_gpt_generator_is_refused(gpt_run, tmp_path, capsys):
    code = cli.main(["plot", "corruption", "--generator", str(gpt_run / "checkpoint.npz"),
                     "--out", str(tmp_path / "c.png")])
    assert code == 1
    assert "not a masked LM" in capsys.readouterr().err


def test_corruption_with_a_bert_generator(tmp_path, capsys):
    run = tmp_path / "bert"
    assert cli.main(["train", "bert", "--steps", "1", "--docs", "8", "--n-layer", "1", "--n-head", "2",
                     "--n-embd", "16", "--max-seq-length", "24", "--batch-size", "2", "--vocab-size", "80",
                     "--no-progress", "--out", str(run)]) == 0
    capsys.readouterr()
    from minilm.commands.plot import load_generator
    tok, generator = load_generator(run / "checkpoint.npz")
    ids = np.asarray(tok.encode("cats eat fish. dogs drink water. birds sing songs. cats drink milk."))
    assert len(ids) > 24                                   # longer than the model: read in windows
    assert generator(ids).shape == (len(ids), tok.vocab_size)
    path, _ = plot(capsys, "corruption", "--generator", run / "checkpoint.npz", "--out", tmp_path / "c.png")
    check_png(tmp_path / "c.png", min_side=300)
