"""A folder with only a ``pytorch_model.bin`` is refused with commands that convert it; both work as
printed, on the checkpoints where a careless conversion breaks (minilm/pretrained/files.py).

Tied weights (BERT's MLM decoder and word embeddings, GPT-2's ``lm_head`` and ``wte``) share one
storage in a ``.bin``, and safetensors' ``save_file`` refuses tensors that share memory — the hint's
former ``{k: v.contiguous() ...}`` failed on every tied model ("Some tensors share memory"). The
transformers route must keep the heads: ``AutoModel`` would drop the MLM / LM head. Each test makes
the ``.bin`` with torch (a tiny model of a stored fixture's config, weights moved off their init),
parses the commands out of minilm's error message, runs each in a subprocess on its own copy, and
compares minilm's logits on the converted folder with transformers' within 1e-5.
"""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograd.errors import CheckpointError
from minilm.pretrained import hf_logits, load_pretrained

torch = pytest.importorskip("torch")
tf = pytest.importorskip("transformers")

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "hf"


def pickled_folder(folder: Path, fixture: str):
    """``folder``: config.json + pytorch_model.bin (``torch.save`` of the state dict, tied tensors
    sharing storage, as the pre-safetensors ``save_pretrained`` wrote them); returns the torch model."""
    config = tf.AutoConfig.from_pretrained(DATA / fixture)
    torch.manual_seed(0)
    model = getattr(tf, config.architectures[0])(config)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape) * 0.05)
    model.eval().save_pretrained(folder)
    (folder / "model.safetensors").unlink()
    torch.save(model.state_dict(), folder / "pytorch_model.bin")
    return model


def printed_commands(folder: Path) -> list[list[str]]:
    """The commands of minilm's refusal, split as a POSIX shell splits them."""
    with pytest.raises(CheckpointError, match=r"pytorch_model\.bin.*pickle") as refused:
        load_pretrained(folder, tokenizer=False)
    lines = [line.strip() for line in str(refused.value).splitlines() if line.startswith("    python ")]
    assert len(lines) == 2, f"expected two commands in the message, got {str(refused.value)!r}"
    return [shlex.split(line) for line in lines]


@pytest.mark.parametrize("fixture", ["bert", "gpt2"])
def test_the_printed_commands_convert_a_tied_checkpoint(tmp_path, fixture):
    source = tmp_path / "bin"
    theirs = pickled_folder(source, fixture)
    state = theirs.state_dict()
    tied = [(a, b) for a in state for b in state if a < b and state[a].data_ptr() == state[b].data_ptr()]
    assert tied, f"{fixture}: the .bin should hold tied tensors (one storage), the case save_file refuses"
    ids = np.array([[5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 0, 0]])
    mask = (np.arange(6) < np.array([[6], [4]])).astype(np.int64)
    with torch.no_grad():
        expected = theirs(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask)).logits.numpy()
    for k, command in enumerate(printed_commands(source)):
        folder = tmp_path / f"converted-{k}"
        shutil.copytree(source, folder)
        argv = [sys.executable] + command[1:-1] + [str(folder)]   # `python` = this interpreter; DIR = the copy
        assert command[0] == "python" and command[-1] == str(source)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"command {k + 1} failed as printed:\n{done.stderr[-2000:]}"
        model, _ = load_pretrained(folder, tokenizer=False)
        diff = float(np.abs(hf_logits(model, ids, mask) - expected)[mask.astype(bool)].max())
        assert diff < 1e-5, f"{fixture}, command {k + 1}: the converted folder gives logits {diff:.2e} away"
        arch = json.loads((folder / "config.json").read_text())["architectures"][0]
        assert arch == type(theirs).__name__, f"command {k + 1} changed the class to {arch} (a head lost?)"
