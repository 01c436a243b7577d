"""``minilm generate --hf DIR`` applies the decoding rules of the folder's generation_config.json as
transformers' ``generate`` does (minilm/pretrained/generate.py): ``repetition_penalty``, ``min_length``,
``min_new_tokens`` beside the rules already there; any other rule that would change the tokens is an
error naming it and the file, never a warning followed by other tokens.

tests/data/hf/generation_rules.json (tools/make_hf_fixtures_heads.py) holds, per case, the
generation_config.json written into a copy of a stored fixture (gpt2, t5, bart) and what transformers'
greedy ``generate`` returned on three prompts, reading the rules from that file itself. Before this
change minilm ignored those rules (with a warning): 14 of the 21 cases gave other tokens, at least one
prompt of each of the seven configurations.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from autograd.errors import CheckpointError
from minilm import cli
from minilm.pretrained.generate import apply_rules, generate_ids, load_for_generate, penalize_repeats
from tests.models.hf_fixture_tool import import_tool

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hf"
STORED = json.loads((DATA / "generation_rules.json").read_text(encoding="utf-8"))
HAS_TRANSFORMERS = all(importlib.util.find_spec(m) is not None for m in ("transformers", "torch"))


def with_config(tmp: Path, fixture: str, generation_config: dict) -> Path:
    """A copy of the stored fixture whose generation_config.json is ``generation_config``."""
    folder = tmp / fixture
    shutil.copytree(DATA / fixture, folder)
    (folder / "generation_config.json").write_text(json.dumps(generation_config), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def generators(tmp_path_factory):
    """One loaded folder per distinct (fixture, generation_config) of the stored cases."""
    loaded = {}
    for case in STORED["cases"]:
        key = json.dumps([case["fixture"], case["generation_config"]], sort_keys=True)
        if key not in loaded:
            loaded[key] = load_for_generate(with_config(tmp_path_factory.mktemp("rules"), case["fixture"],
                                                        case["generation_config"]))
    return loaded


def _name(case) -> str:
    rules = {k: v for k, v in case["generation_config"].items() if k in ("repetition_penalty", "min_length",
                                                                         "min_new_tokens", "eos_token_id")}
    return f"{case['fixture']}-{len(case['input_ids'])}-" + "-".join(f"{k}={v}" for k, v in sorted(rules.items()))


@pytest.mark.parametrize("case", STORED["cases"], ids=_name)
def test_greedy_ids_equal_transformers_with_the_folders_rules(generators, case):
    gen = generators[json.dumps([case["fixture"], case["generation_config"]], sort_keys=True)]
    prompt = gen.prompt_ids(case["prompt"])
    assert prompt == case["input_ids"], f"{case['fixture']}: the prompt's ids differ from transformers' tokenizer"
    out = generate_ids(gen, prompt, case["max_new_tokens"], greedy=True)[0]
    assert out == case["generated"], (
        f"{_name(case)}: minilm {out}, transformers {case['generated']}; is the rule applied to the whole "
        "sequence so far (GPT-2: the prompt too; T5/BART: the decoder's start token too), in transformers' order?")


def test_the_cases_cover_each_rule_on_both_kinds_of_model():
    rules = {(c["fixture"], k) for c in STORED["cases"] for k in c["generation_config"]
             if k in ("repetition_penalty", "min_length", "min_new_tokens")}
    assert {("gpt2", "repetition_penalty"), ("gpt2", "min_length"), ("gpt2", "min_new_tokens"),
            ("t5", "repetition_penalty"), ("t5", "min_length"), ("bart", "repetition_penalty")} <= rules
    gpt2 = [c for c in STORED["cases"] if c["fixture"] == "gpt2" and c["generation_config"].get("repetition_penalty") == 1.3]
    assert len(gpt2) == 3


def test_repetition_penalty_divides_positive_scores_and_multiplies_negative_ones():
    seqs = np.array([[3, 1, 3], [0, 0, 0]])
    logits = np.array([[2.0, -2.0, 1.0, 4.0], [-1.0, 1.0, 1.0, 1.0]], dtype=np.float32)
    out = penalize_repeats(seqs, logits.copy(), 2.0)
    np.testing.assert_array_equal(out, [[2.0, -4.0, 1.0, 2.0], [-2.0, 1.0, 1.0, 1.0]])   # each token once
    assert out.dtype == np.float32


def test_min_length_counts_the_whole_sequence_min_new_tokens_the_new_ones():
    zeros = np.zeros((1, 5))
    seqs = np.array([[7, 8, 9]])                    # GPT-2: a prompt of 3, nothing generated yet (step 0)
    assert np.isneginf(apply_rules(zeros, seqs, 0, 5, {"min_length": 4}, eos_id=2)[0, 2])
    assert np.isfinite(apply_rules(zeros, seqs, 0, 5, {"min_length": 3}, eos_id=2)[0, 2])
    assert np.isneginf(apply_rules(zeros, seqs, 0, 5, {"min_new_tokens": 1}, eos_id=2)[0, 2])
    assert np.isfinite(apply_rules(zeros, seqs, 1, 5, {"min_new_tokens": 1}, eos_id=2)[0, 2])
    assert np.isfinite(apply_rules(zeros, seqs, 0, 5, {"min_length": 9}, eos_id=None)).all()   # no EOS: no ban


@pytest.mark.parametrize("rule, value", [("encoder_repetition_penalty", 1.2), ("bad_words_ids", [[5]]),
                                         ("suppress_tokens", [5]), ("sequence_bias", [[[5], -1.0]]),
                                         ("encoder_no_repeat_ngram_size", 2), ("guidance_scale", 1.5),
                                         ("eos_token_id", [0, 5])])
def test_a_rule_minilm_does_not_apply_is_an_error(tmp_path, capsys, rule, value):
    stored = json.loads((DATA / "gpt2" / "generation_config.json").read_text(encoding="utf-8"))
    folder = with_config(tmp_path, "gpt2", {**stored, rule: value})
    with pytest.raises(CheckpointError, match=rf"generation_config\.json: .*{rule}"):
        load_for_generate(folder)
    code = cli.main(["generate", "--hf", str(folder), "--prompt", "the cats", "--greedy", "--max-new-tokens", "3"])
    out = capsys.readouterr()
    assert code == 1 and rule in out.err and out.out == "", "the command must stop, not print other tokens"


def test_rules_at_their_off_values_and_no_effect_fields_are_accepted(tmp_path):
    stored = json.loads((DATA / "gpt2" / "generation_config.json").read_text(encoding="utf-8"))
    off = {"repetition_penalty": 1.0, "min_length": 0, "suppress_tokens": [], "encoder_repetition_penalty": None,
           "renormalize_logits": True, "remove_invalid_values": True, "num_beams": 4, "do_sample": True}
    assert load_for_generate(with_config(tmp_path, "gpt2", {**stored, **off})).rules == {}


def test_min_new_tokens_replaces_min_length_as_in_transformers(tmp_path):
    stored = json.loads((DATA / "t5" / "generation_config.json").read_text(encoding="utf-8"))
    gen = load_for_generate(with_config(tmp_path, "t5", {**stored, "min_length": 50, "min_new_tokens": 2}))
    assert gen.rules == {"min_new_tokens": 2}


def test_generate_command_applies_the_penalty(tmp_path, capsys):
    case = next(c for c in STORED["cases"] if c["fixture"] == "gpt2" and "repetition_penalty" in c["generation_config"]
                and c["generated"] != _plain(c))
    folder = with_config(tmp_path, "gpt2", case["generation_config"])
    code = cli.main(["generate", "--hf", str(folder), "--prompt", case["prompt"], "--greedy", "--max-new-tokens",
                     str(case["max_new_tokens"]), "--json"])
    out = capsys.readouterr()
    assert code == 0 and json.loads(out.out)["completions"][0]["ids"] == case["generated"]
    assert "repetition_penalty" in json.loads(out.out)["decoding"]["rules"]


def _plain(case) -> list[int]:
    """What the stored fixture gives without the case's rules (greedy)."""
    gen = load_for_generate(DATA / case["fixture"])
    return generate_ids(gen, gen.prompt_ids(case["prompt"]), case["max_new_tokens"], greedy=True)[0]


@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="re-deriving generation_rules.json needs torch and transformers")
def test_the_stored_ids_are_what_transformers_generates():
    tool = import_tool("make_hf_fixtures_heads")
    assert tool.generation_cases(DATA) == STORED["cases"], "transformers' greedy ids changed"
