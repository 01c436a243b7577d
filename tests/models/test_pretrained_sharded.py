"""Checkpoints as the hub serves them (minilm/pretrained/weights.py): sharded folders
(``model.safetensors.index.json`` + ``model-0000i-of-0000n.safetensors``) and the legacy LayerNorm
names ``gamma`` / ``beta`` of the original bert-base-* files.

The fixtures bert-sharded/, gpt2-sharded/ and bert-legacy-names/ are written from the stored tiny
models by ``tools/make_hf_fixtures.py --derived`` (minilm's own safetensors writer, no PyTorch);
their logits must equal, bit for bit, those of the single-file folder they come from. Each way a
sharded folder can be broken is refused by a CheckpointError that names the file, beside the valid
call. Where transformers is installed, it loads the same folders to the same logits.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograd.errors import CheckpointError
from minilm import cli
from minilm.pretrained import hf_logits, load_pretrained
from minilm.pretrained.bert import load_bert_model
from minilm.pretrained.safetensors_file import read_safetensors, write_safetensors
from minilm.pretrained.weights import read_weights
from tests.models.hf_fixture_tool import fixture_tool

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hf"
INDEX = "model.safetensors.index.json"
SHARDED = {"bert-sharded": "bert", "gpt2-sharded": "gpt2"}   # derived folder → the fixture it copies
FAMILIES = ["gpt2", "bert", "roberta", "distilbert", "electra-discriminator", "electra-generator", "bart", "t5",
            "t5-v1_1", "xlnet", "deberta", "deberta-v2"]


def logits(folder, name):
    """hf_logits of ``folder`` on fixture ``name``'s padded batch, and the batch's expected arrays."""
    with np.load(DATA / name / "expected.npz", allow_pickle=False) as f:
        e = dict(f)
    model, _ = load_pretrained(folder, tokenizer=False)
    return hf_logits(model, e["input_ids"], e["attention_mask"], e.get("decoder_input_ids")), e


def shards(folder) -> list[Path]:
    return sorted(folder.glob("model-*-of-*.safetensors"))


# ---- sharded folders load as the single file does ---------------------------------------------------
@pytest.mark.parametrize("folder, name", SHARDED.items())
def test_sharded_fixture_gives_the_single_files_logits(folder, name):
    assert not (DATA / folder / "model.safetensors").exists() and len(shards(DATA / folder)) >= 2, \
        f"{folder} should hold only {INDEX} and shards (rerun tools/make_hf_fixtures.py --derived)"
    got, e = logits(DATA / folder, name)
    single, _ = logits(DATA / name, name)
    np.testing.assert_array_equal(got, single, err_msg=f"{folder}: the shards give other logits than "
                                  f"{name}/model.safetensors: a tensor was lost or read from the wrong shard")
    assert float(np.abs(got - e["logits"]).max()) < 1e-4


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_sharded_gives_the_single_files_logits(name, tmp_path):
    """Each of the 12 fixtures split into 2 shards by the fixture tool (skipped without tools/)."""
    folder = fixture_tool().shard_folder(DATA / name, tmp_path / name, 2)
    got, _ = logits(folder, name)
    single, _ = logits(DATA / name, name)
    np.testing.assert_array_equal(got, single, err_msg=f"{name}: sharded and single-file logits differ")


def test_the_index_is_what_transformers_writes():
    index = json.loads((DATA / "bert-sharded" / INDEX).read_text())
    weight_map = index["weight_map"]
    assert sorted(set(weight_map.values())) == [p.name for p in shards(DATA / "bert-sharded")]
    held = {k: a for p in shards(DATA / "bert-sharded") for k, a in read_safetensors(p)[0].items()}
    assert held.keys() == weight_map.keys()
    assert index["metadata"] == {"total_parameters": sum(a.size for a in held.values()),
                                 "total_size": sum(a.nbytes for a in held.values())}


def test_the_single_file_wins_over_an_index_beside_it(tmp_path):
    """transformers' order: model.safetensors first; an index next to it is not read."""
    folder = shutil.copytree(DATA / "bert-sharded", tmp_path / "both")
    shutil.copy(DATA / "bert" / "model.safetensors", folder / "model.safetensors")
    (folder / INDEX).write_text("not json")
    _, path = read_weights(folder)
    assert path.name == "model.safetensors"


# ---- a broken sharded folder is refused by name ------------------------------------------------------
@pytest.fixture()
def sharded(tmp_path):
    return shutil.copytree(DATA / "bert-sharded", tmp_path / "bert-sharded")


def _index(folder) -> dict:
    return json.loads((folder / INDEX).read_text())


def test_a_missing_shard_is_named(sharded):
    load_pretrained(sharded, tokenizer=False)                                 # complete: loads
    shards(sharded)[1].unlink()
    with pytest.raises(CheckpointError, match=r"model-00002-of-00003\.safetensors: missing; "
                                              r"model\.safetensors\.index\.json places \d+ tensors in it"):
        load_pretrained(sharded, tokenizer=False)


@pytest.mark.parametrize("damage", ["truncated", "not safetensors", "empty"])
def test_a_broken_shard_is_named(sharded, damage):
    load_pretrained(sharded, tokenizer=False)
    path = shards(sharded)[2]
    raw = path.read_bytes()
    path.write_bytes({"truncated": raw[: len(raw) // 2], "not safetensors": b"<html>404</html>" * 8,
                      "empty": b""}[damage])
    with pytest.raises(CheckpointError, match=r"model-00003-of-00003\.safetensors"):
        load_pretrained(sharded, tokenizer=False)


def test_a_tensor_the_index_places_in_a_shard_that_lacks_it_is_named(sharded):
    index = _index(sharded)
    name = next(k for k, v in index["weight_map"].items() if v.startswith("model-00001"))
    index["weight_map"][name] = "model-00002-of-00003.safetensors"
    (sharded / INDEX).write_text(json.dumps(index))
    with pytest.raises(CheckpointError, match=rf"model-00002-of-00003\.safetensors: does not hold \['{name}'\]"):
        load_pretrained(sharded, tokenizer=False)


def test_a_tensor_in_two_shards_is_named(sharded):
    first, second = shards(sharded)[:2]
    a, meta = read_safetensors(first)
    b, _ = read_safetensors(second)
    name = sorted(a)[0]
    write_safetensors(second, {**b, name: a[name]}, meta)
    with pytest.raises(CheckpointError, match=rf"model-00002-of-00003\.safetensors: tensor '{name}' is in "
                                              r"model-00001-of-00003\.safetensors too"):
        load_pretrained(sharded, tokenizer=False)


@pytest.mark.parametrize("text, words", [
    ('{"weight_map": {"a": "model-00001-of-00003.safetensors",', "not a readable JSON file"),
    ("[1, 2]", "non-empty 'weight_map'"),
    ('{"metadata": {"total_size": 4}}', "non-empty 'weight_map'"),
    ('{"weight_map": {}}', "non-empty 'weight_map'"),
    ('{"weight_map": {"a": "../bert/model.safetensors"}}', "file names in the same folder"),
    ('{"weight_map": {"a": 3}}', "file names in the same folder"),
])
def test_a_bad_index_is_named(sharded, text, words):
    (sharded / INDEX).write_text(text)
    with pytest.raises(CheckpointError, match=r"model\.safetensors\.index\.json: .*" + words):
        load_pretrained(sharded, tokenizer=False)


def test_a_folder_without_weights_names_both_files(sharded):
    for p in shards(sharded) + [sharded / INDEX]:
        p.unlink()
    with pytest.raises(CheckpointError, match=r"model\.safetensors: missing, and so is "
                                              r"model\.safetensors\.index\.json"):
        load_pretrained(sharded, tokenizer=False)


def test_a_missing_key_in_a_sharded_folder_names_the_index(sharded):
    """Errors about the tensors (missing, unexpected, shapes) name the index, the folder's weights."""
    index = _index(sharded)
    gone = "cls.predictions.transform.dense.bias"
    shard = sharded / index["weight_map"].pop(gone)
    arrays, meta = read_safetensors(shard)
    del arrays[gone]
    write_safetensors(shard, arrays, meta)
    (sharded / INDEX).write_text(json.dumps(index))
    with pytest.raises(CheckpointError, match=rf"{INDEX}: missing keys \['{gone}'\]"):
        load_pretrained(sharded, tokenizer=False)


# ---- legacy names ------------------------------------------------------------------------------------
def test_bert_with_gamma_beta_gives_the_same_logits():
    """bert-base-cased names its LayerNorms' parameters gamma / beta; transformers renames them."""
    keys = read_safetensors(DATA / "bert-legacy-names" / "model.safetensors")[0]
    assert any(k.endswith("LayerNorm.gamma") for k in keys) and not any(k.endswith("LayerNorm.weight") for k in keys)
    got, e = logits(DATA / "bert-legacy-names", "bert")
    single, _ = logits(DATA / "bert", "bert")
    np.testing.assert_array_equal(got, single, err_msg="gamma / beta should load as LayerNorm weight / bias")
    _, _, _, missing = load_bert_model(DATA / "bert-legacy-names")
    assert missing == load_bert_model(DATA / "bert")[3]


def test_a_parameter_under_both_names_is_refused(tmp_path):
    folder = shutil.copytree(DATA / "bert-legacy-names", tmp_path / "both")
    arrays, meta = read_safetensors(folder / "model.safetensors")
    write_safetensors(folder / "model.safetensors",
                      {**arrays, "bert.embeddings.LayerNorm.weight": arrays["bert.embeddings.LayerNorm.gamma"]}, meta)
    with pytest.raises(CheckpointError, match=r"holds both 'bert\.embeddings\.LayerNorm\.gamma' and "
                                              r"'bert\.embeddings\.LayerNorm\.weight'"):
        load_pretrained(folder, tokenizer=False)


@pytest.mark.parametrize("name, key, shape", [
    ("t5", "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight", (8, 4)),
    ("bart", "model.encoder.version", (1,)),
    ("bart", "model.decoder.version", (1,)),
])
def test_keys_transformers_skips_are_skipped(tmp_path, name, key, shape):
    """Keys a transformers class ignores on load (``_keys_to_ignore_on_load_unexpected``): the first T5
    port's unused cross-attention bias, fairseq's version counters. Any other extra key is refused."""
    shutil.copy(DATA / name / "config.json", tmp_path / "config.json")
    arrays, meta = read_safetensors(DATA / name / "model.safetensors")
    write_safetensors(tmp_path / "model.safetensors", {**arrays, key: np.ones(shape, np.float32)}, meta)
    got, _ = logits(tmp_path, name)
    np.testing.assert_array_equal(got, logits(DATA / name, name)[0])
    write_safetensors(tmp_path / "model.safetensors", {**arrays, key + "_x": np.ones(shape, np.float32)}, meta)
    with pytest.raises(CheckpointError, match="unexpected keys"):
        load_pretrained(tmp_path, tokenizer=False)


def test_legacy_names_in_a_sharded_folder(tmp_path):
    """The two together, as an old checkpoint re-uploaded in shards would be."""
    folder = fixture_tool().shard_folder(DATA / "bert-legacy-names", tmp_path / "old-sharded", 2)
    got, _ = logits(folder, "bert")
    np.testing.assert_array_equal(got, logits(DATA / "bert", "bert")[0])


def test_the_derived_fixtures_are_what_the_tool_writes(tmp_path):
    """tests/data/hf/{bert,gpt2}-sharded and bert-legacy-names are regenerated, never edited by hand."""
    tool = fixture_tool()
    for name in ("bert", "gpt2"):
        shutil.copytree(DATA / name, tmp_path / name)
    made = tool.derived_folders(tmp_path)
    assert set(made) == {"bert-sharded", "gpt2-sharded", "bert-legacy-names"}
    for folder in made:
        stored, written = (sorted(p.name for p in (d / folder).iterdir()) for d in (DATA, tmp_path))
        assert stored == written, f"{folder}: files {stored}, the tool writes {written}"
        for name in stored:
            assert (DATA / folder / name).read_bytes() == (tmp_path / folder / name).read_bytes(), \
                f"{folder}/{name} differs from what tools/make_hf_fixtures.py --derived writes"


# ---- the commands on a sharded folder ---------------------------------------------------------------
def run_json(capsys, *argv) -> dict:
    """``minilm ARGV --json`` in this process: its report without the folder's own name."""
    code = cli.main([str(a) for a in argv] + ["--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return {k: v for k, v in json.loads(out.out).items() if k not in ("dir", "hf")}


def test_inspect_in_a_subprocess_on_a_sharded_folder():
    script = shutil.which("minilm", path=str(Path(sys.executable).parent))
    command = [script] if script else [sys.executable, "-m", "minilm.cli"]
    reports = []
    for folder in ("bert-sharded", "bert"):
        done = subprocess.run([*command, "inspect", str(DATA / folder), "--json"], capture_output=True, text=True,
                              timeout=300, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        reports.append(json.loads(done.stdout))
    sharded, single = ({k: v for k, v in r.items() if k != "dir"} for r in reports)
    assert sharded == single and sharded["n_hidden_states"] == 3


def test_fill_mask_and_generate_on_sharded_folders(capsys):
    sharded, single = (run_json(capsys, "fill-mask", DATA / f, "--text", "the cats [MASK] fish.")
                       for f in ("bert-sharded", "bert"))
    assert sharded == single and sharded["masks"]
    sharded, single = (run_json(capsys, "generate", "--hf", DATA / f, "--prompt", "the cats", "--max-new-tokens", 6,
                                "--greedy") for f in ("gpt2-sharded", "gpt2"))
    assert sharded == single


def test_embed_on_a_sharded_folder(capsys, tmp_path):
    """``minilm embed DIR TEXT`` (a BERT folder with vocab.txt, written here from tokenizer.json)."""
    outs = []
    for folder in ("bert-sharded", "bert"):
        copy = shutil.copytree(DATA / folder, tmp_path / folder)
        vocab = json.loads((copy / "tokenizer.json").read_text())["model"]["vocab"]
        (copy / "vocab.txt").write_text("".join(t + "\n" for t in sorted(vocab, key=vocab.get)), encoding="utf-8")
        outs.append(run_json(capsys, "embed", copy, "the cats eat fish.", "hello world"))
    assert outs[0] == outs[1] and len(outs[0]["embeddings"]) == 2


# ---- transformers, where installed ------------------------------------------------------------------
@pytest.mark.skipif(importlib.util.find_spec("transformers") is None or importlib.util.find_spec("torch") is None,
                    reason="transformers and torch are not installed (optional: the derived folders' check)")
def test_transformers_loads_the_derived_folders_to_the_same_logits():
    diffs = fixture_tool().check_derived(DATA)
    assert max(diffs.values()) < 1e-5, f"transformers on the derived folders: max |Δ logits| {diffs}"
