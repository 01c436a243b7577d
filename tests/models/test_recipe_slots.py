"""``--impl exercises`` names every unfinished slot on a command's path at once (minilm/recipes/slots.py).

The acceptance case of the issue: every slot filled in but one task, and ``minilm --impl exercises
train ...`` stops before any work, naming that task. "Filled in" is a temporary ``exercises``
package copied from solutions/, with the one module's generated stub file put back.
"""
import contextlib
import io
import shutil
import sys
from pathlib import Path

import pytest

from autograd import tasks
from minilm import cli
from minilm.recipes import slots as recipe_slots
from minilm.recipes.config import override

ROOT = Path(__file__).resolve().parents[2]

if not tasks.solutions_available():
    pytest.skip("needs solutions/ (a full checkout)", allow_module_level=True)


@pytest.fixture
def kit_with_stub(tmp_path, monkeypatch):
    """``make(module_file)``: an exercises/ package that is solutions/ except that one generated stub file."""
    def make(stub_file: str):
        shutil.copytree(ROOT / "solutions", tmp_path / "exercises",
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(ROOT / "exercises" / stub_file, tmp_path / "exercises" / stub_file)
        monkeypatch.syspath_prepend(str(tmp_path))
        for name in [m for m in sys.modules if m == "exercises" or m.startswith("exercises.")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setattr(tasks, "_impl", tasks._impl)   # main() sets the global choice
        return tmp_path
    yield make
    _forget_exercises()


def _forget_exercises():
    """Drop the temporary exercises package from sys.modules (monkeypatch then restores the real one)."""
    for name in [m for m in sys.modules if m == "exercises" or m.startswith("exercises.")]:
        del sys.modules[name]


CASES = [  # (the stubbed file, its task, the command lines that must stop naming it)
    ("task07_electra/loss.py", "7.2", [["train", "electra", "--objective", o]
                                      for o in ("electra", "electra15", "replace_mlm", "all_tokens_mlm")]),
    ("task06_roberta/masking.py", "6.1", [["train", "roberta", "--whole-word-mask"], ["train", "roberta"]]),
    ("task12_beyond/wwm.py", "12.2", [["train", "bert", "--whole-word-mask"]]),
    ("task04_gpt/loss.py", "4.1", [["train", "gpt"]]),
]


@pytest.mark.parametrize("stub_file, task, commands", CASES, ids=[c[1] for c in CASES])
def test_one_stubbed_task_is_named_before_any_work(kit_with_stub, stub_file, task, commands):
    kit_with_stub(stub_file)
    for argv in commands:
        args = cli.build_parser().parse_args(["--impl", "exercises", *argv])
        missing = recipe_slots.missing_slots(args)
        assert missing and {m[0] for m in missing} == {task}, (
            f"minilm {' '.join(argv)} with only Task {task} stubbed lists {missing}")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = cli.main(["--impl", "exercises", *argv, "--steps", "1"])
        assert rc == 1 and f"Task {task}" in err.getvalue(), err.getvalue()
        assert all(f"Task {t}" not in err.getvalue() for t in ("1.1", "3.1", "5.1")), err.getvalue()


def test_untouched_stubs_are_all_listed_at_once():
    args = cli.build_parser().parse_args(["--impl", "exercises", "train", "gpt"])
    missing = recipe_slots.missing_slots(args)
    names = {m[1].rsplit(".", 1)[1] for m in missing}
    assert {"backward", "causal_lm_loss", "scaled_dot_product_attention", "embed_inputs"} <= names


def test_a_release_never_suggests_solutions(monkeypatch):
    monkeypatch.setattr(tasks, "solutions_available", lambda: False)
    assert "--impl solutions" not in cli._missing_hint()
    monkeypatch.setattr(tasks, "solutions_available", lambda: True)
    assert "--impl solutions" in cli._missing_hint()


def test_syntax_error_is_reported_not_hidden(tmp_path, monkeypatch):
    pkg = tmp_path / "exercises"
    (pkg / "task04_gpt").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "task04_gpt" / "__init__.py").write_text("")
    (pkg / "task04_gpt" / "loss.py").write_text("def causal_lm_loss(:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "exercises" or m.startswith("exercises.")]:
        monkeypatch.delitem(sys.modules, name)
    (found,) = tasks.unfinished([("task04_gpt.loss", "causal_lm_loss")])
    _forget_exercises()
    assert "SyntaxError" in found[2] and "line 1" in found[2]


def test_the_recorded_paths_are_current():
    """tools/make_slot_paths.py re-traces a 1-step run of every family, of each of its variants and
    of the demo: the file must list exactly what they call (a slot too few would let ``--impl
    exercises`` miss an unfinished task; one too many would name a task the path never runs)."""
    from tests.models.hf_fixture_tool import import_tool
    tool = import_tool("make_slot_paths")
    paths, _ = recipe_slots.recorded()
    traced = tool.trace_paths()
    assert set(traced) == set(paths), "a recipe or variant with no list (or a list with no recipe)"
    problems = tool.differences(paths, traced)
    assert not problems, ("minilm/recipes/slot_paths.json is not current (+ called but not listed, - listed "
                          "but not called); run python tools/make_slot_paths.py:\n  " + "\n  ".join(problems))


def test_a_variant_is_selected_by_the_options_that_make_it():
    parse = cli.build_parser().parse_args
    assert recipe_slots.train_variants("roberta", parse(["train", "roberta"])) == ["roberta"]
    assert recipe_slots.train_variants("roberta", parse(["train", "roberta", "--whole-word-mask", "--packing",
                                                         "doc"])) == ["roberta", "roberta:wwm", "roberta:doc"]
    for noising in ("infilling+permutation+rotation", "rotation", "masking+rotation"):
        keys = recipe_slots.train_variants("bart", parse(["train", "bart", "--noising", noising]))
        assert keys == ["bart", "bart:rotation"], (noising, keys)
    assert recipe_slots.train_variants("bart", parse(["train", "bart", "--noising", "masking"])) == ["bart"]
    with_rotation = recipe_slots.command_slots(parse(["train", "bart", "--noising", "masking+rotation"]))
    assert ("task09_seq2seq.noising", "document_rotation") in with_rotation


def test_bert_predictions_run_the_task_12_2_walk():
    import numpy as np

    from minilm import corruption
    with tasks.trace() as seen:
        corruption.bert_masked_lm_predictions(np.array([2, 7, 8, 9, 3]), cls_id=2, sep_id=3, mask_id=4,
                                              vocab_size=12, rng=np.random.default_rng(0))
    assert ("task12_beyond.wwm", "choose_groups") in seen


def test_bert_predictions_refuse_overlapping_groups():
    import numpy as np

    from autograd.errors import ShapeError
    from minilm import corruption
    with pytest.raises(ShapeError, match="repeats a position"):
        corruption.bert_masked_lm_predictions(np.array([2, 7, 8, 9, 3]), cls_id=2, sep_id=3, mask_id=4,
                                              vocab_size=12, rng=np.random.default_rng(0), groups=[[1, 2], [2, 3]])


def test_gpt_recipe_loss_is_the_task_4_1_slot_and_equals_the_shifted_cross_entropy():
    import numpy as np

    import autograd.functional as F
    from dataclasses import replace
    from minilm.recipes import gpt
    recipe = gpt.GPTRecipe(override(gpt.GPTRecipeConfig(), docs=20, n_layer=1, n_embd=32, block_size=16))
    ids = recipe.batch(np.random.default_rng(0))                       # (B, T) windows
    with tasks.trace() as seen:
        loss, _ = recipe.loss(recipe.model, ids)
    assert ("task04_gpt.loss", "causal_lm_loss") in seen
    logits, _ = recipe.model(ids)
    assert loss.item() == F.cross_entropy(logits[:, :-1], ids[:, 1:]).item()


def test_every_experiment_and_family_has_a_path():
    from minilm.experiments import available as experiments
    from minilm.recipes import available as families
    paths, recorded_experiments = recipe_slots.recorded()
    assert set(experiments()) == set(recorded_experiments), "an experiment with no slot list in slot_paths.json"
    assert set(families()) <= set(paths), "a recipe with no slot list in slot_paths.json"
