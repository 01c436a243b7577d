"""The course's own checkpoints in miniature (tests/data/course/, made by tools/make_course_fixtures.py):
each folder is the hub's — its config.json field for field with the sizes shrunk, its parameter
names (legacy ones included), its tokenizer files — and minilm must read it as transformers does.

Each is also re-saved in float32, float16 and bfloat16, as one file and as 2 shards
(tests/models/checkpoint_variants.py); the logits must stay within 1e-4 of what transformers computes
from the same rounded weights (stored by the tool, which loaded each variant in transformers).
"""
import json
from pathlib import Path

import numpy as np
import pytest

from tests.models.checkpoint_variants import DTYPES, write_variant
from minilm.pretrained import hf_logits, load_pretrained

COURSE = Path(__file__).resolve().parents[1] / "data" / "course"
FOLDERS = sorted(p.name for p in COURSE.iterdir() if (p / "config.json").is_file())


def _expected(folder: Path) -> dict:
    with np.load(folder / "expected.npz", allow_pickle=False) as f:
        return dict(f)


def _logits(folder: Path, stored: dict) -> np.ndarray:
    model, _ = load_pretrained(folder, tokenizer=False)
    return hf_logits(model, stored["input_ids"], stored["attention_mask"], stored.get("decoder_input_ids"))


def test_every_course_checkpoint_has_a_miniature():
    names = {json.loads((COURSE / f / "tokens.json").read_text(encoding="utf-8"))["checkpoint"] for f in FOLDERS}
    assert names == {"bert-base-cased", "roberta-base", "distilbert-base-uncased",
                     "google/electra-small-discriminator", "google/electra-small-generator", "t5-small",
                     "google/flan-t5-small", "facebook/bart-base", "microsoft/deberta-base",
                     "microsoft/deberta-v3-small", "xlnet-base-cased", "gpt2"}


@pytest.mark.parametrize("name", FOLDERS)
def test_logits_equal_transformers(name):
    """Within 1e-5 of transformers, relative to the largest logit where that is above 1."""
    folder = COURSE / name
    stored = _expected(folder)
    got, want = _logits(folder, stored), stored["logits_F32"]
    assert got.shape == want.shape
    # float32 round-off grows with the logits' size: flan-t5's untied head gives logits of ±25
    assert np.abs(got - want).max() < 1e-5 * max(1.0, np.abs(want).max())


@pytest.mark.parametrize("name", FOLDERS)
def test_tokenizer_files_give_transformers_ids(name):
    folder = COURSE / name
    _, tok = load_pretrained(folder)
    tokens = json.loads((folder / "tokens.json").read_text(encoding="utf-8"))
    got = [tok.encode(t, add_special_tokens=True) for t in tokens["texts"]]
    assert got == tokens["input_ids"]


@pytest.mark.parametrize("shards", [1, 2])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FOLDERS)
def test_half_precision_and_shards(name, dtype, shards, tmp_path):
    """float16 / bfloat16 weights, one file or an index + 2 shards: transformers' logits within 1e-4."""
    stored = _expected(COURSE / name)
    folder = write_variant(COURSE / name, tmp_path / name, dtype, shards)
    if shards > 1:
        assert len(list(folder.glob("model-*-of-*.safetensors"))) == shards
    got = _logits(folder, stored)
    assert np.abs(got - stored[f"logits_{dtype}"]).max() < 1e-4


def test_the_tool_rederives_every_stored_number():
    """transformers loads each stored folder and each of its 6 variants and gives the stored logits
    and ids (tools/make_course_fixtures.py --check; needs torch and transformers)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.models.hf_fixture_tool import import_tool
    tool = import_tool("make_course_fixtures")
    for checkpoint in tool.COURSE:
        diffs = tool.check(checkpoint, COURSE / tool.folder_name(checkpoint))
        assert max(diffs.values()) <= 1e-5, (checkpoint, diffs)


MASKED = {"bert-base-cased": "[MASK]", "roberta-base": "<mask>", "distilbert-base-uncased": "[MASK]",
          "google--electra-small-generator": "[MASK]", "microsoft--deberta-base": "[MASK]",
          "microsoft--deberta-v3-small": "[MASK]"}
GENERATORS = ("gpt2", "t5-small", "google--flan-t5-small", "facebook--bart-base")


@pytest.mark.parametrize("name", sorted(MASKED))
def test_fill_mask_reads_the_hub_folder(name, capsys):
    """The hub's tokenizer files need not name the mask token (bert-base-cased's tokenizer_config.json
    names none, roberta-base has no such file): the class's default is taken, as AutoTokenizer does."""
    from minilm import cli
    assert cli.main(["fill-mask", str(COURSE / name), "--text", f"the cats {MASKED[name]} fish", "--top-k", "3"]) == 0
    assert capsys.readouterr().out.count("\n| ") >= 3


@pytest.mark.parametrize("name", sorted(set(FOLDERS) - set(GENERATORS)))
def test_inspect_reads_the_hub_folder(name, capsys):
    from minilm import cli
    assert cli.main(["inspect", str(COURSE / name), "--text", "the cats eat fish"]) == 0


@pytest.mark.parametrize("name", GENERATORS)
def test_generate_reads_the_hub_folder(name, capsys):
    from minilm import cli
    assert cli.main(["generate", "--hf", str(COURSE / name), "--prompt", "the cats", "--greedy",
                     "--max-new-tokens", "4"]) == 0
