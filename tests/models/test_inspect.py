"""The course's hands-on on loaded checkpoints: ``minilm inspect`` and ``minilm fill-mask``
(minilm/pretrained/inspect.py, minilm/commands/{inspect,fill_mask}.py).

On the tiny fixtures of tests/data/hf/ (fast: no PyTorch or transformers), the hidden states are
checked through each model's own head against the logits transformers returned; on the real
all-MiniLM-L6-v2 (when installed), 7 hidden states of (T, 384) whose [CLS] rows equal
transformers' (tests/data/minilm_l6_golden.npz).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograd import Tensor, no_grad
from autograd.errors import ConfigError, TokenizerError
from minilm import cli
from minilm.pretrained import hf_logits
from minilm.pretrained.inspect import fill_mask, hidden_states, load_for_inspect
from tests.helpers import MINILM_L6_DIR, needs_minilm_l6

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hf"
GOLDEN = ROOT / "tests" / "data" / "minilm_l6_golden.npz"
TEXT = "Bert knows Snuffleupagus"


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def run_subprocess(*argv):
    script = shutil.which("minilm", path=str(Path(sys.executable).parent))
    command = [script] if script else [sys.executable, "-m", "minilm.cli"]
    return subprocess.run([*command, *argv], capture_output=True, text=True, timeout=300, cwd=ROOT)


def _head(name, model, h):
    """The model's own head on its last hidden state (B, T, C) → what hf_logits returns."""
    with no_grad():
        if name == "gpt2":
            return h @ model.wte.weight.data.T
        if name == "bert":
            B, T, C = h.shape
            return model.cls.predictions(Tensor(h.reshape(B * T, C))).data.reshape(B, T, -1)
        if name in ("roberta", "distilbert", "electra-generator"):
            return model.lm_head(Tensor(h)).data
        return model.head(Tensor(h)).data     # electra-discriminator: (B, T)


# ---- hidden_states -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gpt2", "bert", "roberta", "distilbert", "electra-discriminator",
                                  "electra-generator"])
def test_hidden_states_are_l_plus_one_and_end_where_the_logits_start(name):
    model, _, _ = load_for_inspect(DATA / name)
    with np.load(DATA / name / "expected.npz", allow_pickle=False) as f:
        ids, mask, logits = f["input_ids"], f["attention_mask"], f["logits"]
    before = hf_logits(model, ids, mask)
    states = hidden_states(model, ids, mask)
    n_layer = model.config.n_layer
    assert len(states) == n_layer + 1, f"{name}: {len(states)} hidden states, expected embeddings + {n_layer} layers"
    B, T = ids.shape
    assert all(h.shape[:2] == (B, T) and h.dtype == np.float32 for h in states), [h.shape for h in states]
    diff = float(np.abs(_head(name, model, states[-1]) - logits).max())
    assert diff < 1e-4, (f"{name}: the head on the last hidden state differs from transformers' logits by {diff:.2e}: "
                         "the last state is not the one the head reads (GPT-2: after ln_f?)")
    # asking for the states leaves the model's default forward as it was
    np.testing.assert_array_equal(hf_logits(model, ids, mask), before)


@pytest.mark.parametrize("name", ["bart", "t5"])
def test_hidden_states_of_an_encoder_decoder_is_a_clear_error(name):
    model, _, _ = load_for_inspect(DATA / name)
    with pytest.raises(ConfigError, match="encoder-decoder"):
        hidden_states(model, [[1, 2, 3]])


# ---- minilm inspect ----------------------------------------------------------------------------
def test_inspect_json_on_a_fixture(capsys):
    code, out, _ = run_cli(capsys, "inspect", str(DATA / "bert"), "--text", TEXT, "--json")
    assert code == 0
    r = json.loads(out)
    _, tok, _ = load_for_inspect(DATA / "bert")
    assert r["ids"] == tok.encode(TEXT, add_special_tokens=True)
    assert r["tokens"][0] == "[CLS]" and r["tokens"][-1] == "[SEP]"
    assert r["n_hidden_states"] == 3 and r["hidden_state_shape"] == [len(r["ids"]), 32]
    assert "cls_vs_pooler" not in r, "a BertForMaskedLM file has no pooler: its pooler would be random"


def test_inspect_text_and_compare(capsys):
    code, out, _ = run_cli(capsys, "inspect", str(DATA / "bert"), "--compare", str(DATA / "roberta"))
    assert code == 0
    assert "| # | bert piece | id | roberta piece | id |" in out
    assert "| 0 | [CLS] | 2 | <s> | 0 |" in out
    assert "hidden states: 3 = embeddings + 2 layers" in out
    code, out, _ = run_cli(capsys, "inspect", str(DATA / "bert"), "--compare", str(DATA / "roberta"), "--json")
    r = json.loads(out)
    assert r["compare"]["model_type"] == "roberta" and r["compare"]["tokens"][0] == "<s>"
    assert r["compare"]["tokens"][-1] == "</s>"


def test_inspect_an_encoder_decoder_shows_the_pieces(capsys):
    code, out, _ = run_cli(capsys, "inspect", str(DATA / "t5"), "--json")
    r = json.loads(out)
    assert code == 0 and r["hidden_states"] is None and "encoder-decoder" in r["note"] and r["ids"]


def test_inspect_in_a_subprocess():
    done = run_subprocess("inspect", str(DATA / "roberta"), "--text", TEXT, "--json")
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    assert r["model_type"] == "roberta" and r["n_hidden_states"] == 3 and r["tokens"][0] == "<s>"


# ---- minilm fill-mask --------------------------------------------------------------------------
@pytest.mark.parametrize("name, text", [("roberta", "Paris is the <mask> of France."),
                                        ("roberta", "Paris is the [MASK] of France."),
                                        ("bert", "Paris is the [MASK] of [MASK]."),
                                        ("distilbert", "Paris is the [MASK] of France."),
                                        ("electra-generator", "Paris is the [MASK] of France.")])
def test_fill_mask_gives_the_softmax_of_the_mlm_logits(name, text):
    model, tok, _ = load_for_inspect(DATA / name)
    r = fill_mask(model, tok, text, top_k=4)
    assert len(r["masks"]) == text.count("[MASK]") + text.count("<mask>")
    ids = tok.convert_tokens_to_ids(r["tokens"])
    logits = hf_logits(model, [ids])[0].astype(np.float64)
    for m in r["masks"]:
        assert ids[m["position"]] == tok.mask_id
        z = np.exp(logits[m["position"]] - logits[m["position"]].max())
        p = z / z.sum()
        assert [f["id"] for f in m["fillers"]] == np.argsort(-p, kind="stable")[:4].tolist()
        np.testing.assert_allclose([f["prob"] for f in m["fillers"]], np.sort(p)[::-1][:4], rtol=1e-9)


def test_fill_mask_cli_and_subprocess(capsys):
    code, out, _ = run_cli(capsys, "fill-mask", str(DATA / "roberta"), "--text", "Paris is the [MASK] of France.",
                           "--top-k", "3")
    assert code == 0 and "mask token <mask>" in out and "| 3 |" in out and "| 4 |" not in out
    done = run_subprocess("fill-mask", str(DATA / "bert"), "--text", "Paris is the [MASK] of France.", "--json")
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    assert r["mask_token"] == "[MASK]" and len(r["masks"]) == 1 and len(r["masks"][0]["fillers"]) == 5


@pytest.mark.parametrize("name", ["electra-discriminator", "gpt2", "t5"])
def test_fill_mask_without_an_mlm_head_is_a_clear_error(name, capsys):
    model, tok, _ = load_for_inspect(DATA / name)
    with pytest.raises(ConfigError, match="masked-LM head"):
        fill_mask(model, tok, "Paris is the [MASK] of France.")


# ---- bad input: `minilm CMD: error: ...` and exit 1 -------------------------------------------
def _bad_folders(tmp_path):
    empty = tmp_path / "no-config"
    empty.mkdir()
    pickled = tmp_path / "pickle-only"
    pickled.mkdir()
    shutil.copy(DATA / "bert" / "config.json", pickled / "config.json")
    (pickled / "pytorch_model.bin").write_bytes(b"not read")
    return {"config.json": empty, "pytorch_model.bin": pickled}


@pytest.mark.parametrize("command", ["inspect", "fill-mask"])
def test_bad_folders_give_a_clear_error(command, tmp_path, capsys):
    for words, folder in _bad_folders(tmp_path).items():
        code, out, err = run_cli(capsys, command, str(folder), "--text", "a [MASK] b")
        assert code == 1 and not out
        assert err.startswith(f"minilm {command}: error: ") and words in err, err


def test_text_without_a_mask_is_a_clear_error(capsys):
    model, tok, _ = load_for_inspect(DATA / "roberta")
    with pytest.raises(TokenizerError, match="no mask token"):
        fill_mask(model, tok, "Paris is the capital of France.")
    code, out, err = run_cli(capsys, "fill-mask", str(DATA / "bert"), "--text", "no mask here")
    assert code == 1 and err.startswith("minilm fill-mask: error: ") and "[MASK]" in err


def test_bad_input_in_a_subprocess(tmp_path):
    done = run_subprocess("inspect", str(_bad_folders(tmp_path)["pytorch_model.bin"]))
    assert done.returncode == 1 and done.stderr.startswith("minilm inspect: error: "), done.stderr
    assert "safetensors" in done.stderr


# ---- the real all-MiniLM-L6-v2 -----------------------------------------------------------------
@needs_minilm_l6
def test_minilm_l6_has_7_hidden_states_of_t_by_384(capsys):
    code, out, _ = run_cli(capsys, "inspect", str(MINILM_L6_DIR), "--text", TEXT, "--json")
    assert code == 0
    r = json.loads(out)
    T = len(r["ids"])
    assert r["n_hidden_states"] == 7 and r["hidden_state_shape"] == [T, 384]
    assert [h["shape"] for h in r["hidden_states"]] == [[T, 384]] * 7
    assert r["tokens"][0] == "[CLS]" and r["tokens"][-1] == "[SEP]" and r["ids"][0] == 101
    assert abs(r["cls_vs_pooler"]["cos"]) < 0.5, "pooler_output should be far from h[CLS] on all-MiniLM-L6-v2"


@needs_minilm_l6
def test_minilm_l6_hidden_states_equal_transformers():
    model, tok, info = load_for_inspect(MINILM_L6_DIR)
    assert info["has_pooler"]
    with np.load(GOLDEN, allow_pickle=False) as z:
        texts = json.loads(z["texts"].tobytes().decode("utf-8"))[:4]
        want = z["cls_layers"]                                                  # (7, 4, 384)
    ids = [tok.encode(t, add_special_tokens=True) for t in texts]
    T = max(map(len, ids))
    batch = np.array([i + [tok.pad_id] * (T - len(i)) for i in ids])
    mask = np.array([[1] * len(i) + [0] * (T - len(i)) for i in ids])
    got = np.stack([h[:, 0] for h in hidden_states(model, batch, mask)])      # (7, 4, 384)
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)


@needs_minilm_l6
def test_minilm_l6_fill_mask_says_it_has_no_mlm_head(capsys):
    code, out, err = run_cli(capsys, "fill-mask", str(MINILM_L6_DIR), "--text", "Paris is the [MASK] of France.")
    assert code == 1 and err.startswith("minilm fill-mask: error: ") and "masked-LM head" in err
