"""``minilm experiment distillation-transfer`` (minilm/experiments/distillation_transfer.py): its plan,
the transfer set and its labels, the equal-steps check, the 0× rows being the ``distillation``
experiment's students, and (slow) the --quick run end to end."""
import json
import math
from dataclasses import replace

import numpy as np
import pytest

from autograd.errors import ConfigError
from minilm.cli import build_parser
from minilm.experiments import EXPERIMENTS, distillation
from minilm.experiments import distillation_transfer as exp
from minilm.recipes.config import from_args
from tests.models.experiment_quick import quick_run


def test_registered_and_planned():
    assert EXPERIMENTS[exp.NAME] == "minilm.experiments.distillation_transfer"
    full, quick = exp.plan(exp.CONFIG()), exp.plan(exp.CONFIG.quick())
    assert full.conditions[0] == "teacher (4 layers)"
    assert len(full.conditions) == (1 + len(exp.OBJECTIVES) * len(full.settings["transfer"])
                                    + 2 + len(full.settings["scratch_temperatures"]))
    assert "transfer 0×: hard labels" in full.conditions and "transfer 16×: soft + cosine" in full.conditions
    assert full.conditions[-5:] == ["from scratch, 30 + 0: the labels alone (no teacher)",
                                    "from scratch, 30 + 270: hard labels", "from scratch, 30 + 270: soft targets, T = 2",
                                    "from scratch, 30 + 270: soft targets, T = 4",
                                    "from scratch, 30 + 270: soft targets, T = 8"]
    assert [m.key for m in full.metrics][:3] == ["retained", "accuracy", "negated"]
    for key in ("student_steps", "teacher_steps", "n_test", "n_embd"):
        assert quick.settings[key] < full.settings[key], key
    assert len(quick.conditions) < len(full.conditions)
    assert json.loads(json.dumps(full.settings)) == full.settings        # --resume compares it through JSON
    assert any("Held equal" in n and str(full.settings["student_steps"]) in n for n in full.notes)
    args = build_parser().parse_args(["experiment", exp.NAME, "--student-steps", "7", "--corpus", "my.txt"])
    s = exp.plan(from_args(exp.CONFIG, args, base=exp.CONFIG())).settings
    assert (s["student_steps"], s["corpus"]) == (7, "my.txt")
    assert "my.txt" in exp.plan(replace(exp.CONFIG(), corpus="my.txt")).notes[0]


@pytest.mark.parametrize("change", [dict(transfer=(0, -1)), dict(transfer=(1, 1)), dict(transfer=()),
                                    dict(student_layers=4), dict(student_steps=0), dict(temperature=0.0),
                                    dict(scratch_labelled=0), dict(scratch_labelled=301), dict(scratch_transfer=-1),
                                    dict(scratch_temperatures=(2.0, 0.0))])
def test_plan_rejects_a_bad_setting(change):
    with pytest.raises(ConfigError, match=exp.NAME):
        exp.plan(replace(exp.CONFIG(), **change))


def test_equal_steps_check_passes_and_fails():
    exp.check_equal_steps("transfer 4×: soft targets", 300, 300)
    with pytest.raises(ConfigError, match="took 299 optimizer steps.*300"):
        exp.check_equal_steps("transfer 4×: soft targets", 299, 300)


def test_transfer_sets_are_nested_fresh_and_leave_the_test_pairs_out():
    from minilm.data import entailment_dataset
    test = entailment_dataset(300, rng=np.random.default_rng(9))
    held_out = {(e.premise, e.hypothesis) for e in test}
    small, big = exp.transfer_examples(100, 0, held_out), exp.transfer_examples(400, 0, held_out)
    assert len(small) == 100 and len(big) == 400 and big[:100] == small
    assert not {(e.premise, e.hypothesis) for e in big} & held_out
    assert exp.transfer_examples(100, 1, held_out) != small                # a seed's own stream
    assert exp.transfer_examples(0, 0, held_out) == []


def test_join_rows_pads_to_the_wider_set():
    a_ids, a_mask = np.array([[2, 5, 3]]), np.array([[1, 1, 1]])
    b_ids, b_mask = np.array([[2, 3, 9, 9, 9], [2, 6, 7, 8, 3]]), np.array([[1, 1, 0, 0, 0], [1] * 5])
    ids, mask = exp.join_rows(a_ids, a_mask, b_ids, b_mask, pad_id=9)
    assert ids.tolist() == [[2, 5, 3, 9, 9], [2, 3, 9, 9, 9], [2, 6, 7, 8, 3]]
    assert mask.tolist() == [[1, 1, 1, 0, 0], [1, 1, 0, 0, 0], [1] * 5]


def test_negated_premises():
    from minilm.data import EntailmentExample
    ex = [EntailmentExample("the dog does not run .", "a animal does not run .", 0),
          EntailmentExample("the dog runs .", "the dog does not run .", 2)]
    assert exp.negated_premises(ex).tolist() == [True, False]


@pytest.fixture(scope="module")
def tiny():
    """A toy teacher bundle (``distillation``'s), at sizes that train in a few seconds."""
    settings = exp.plan(replace(exp.CONFIG.quick(), docs=12, pretrain_steps=2, teacher_steps=4, n_train=40,
                                n_test=60, student_steps=3, transfer=(0, 2))).settings
    return settings, distillation.teacher_bundle(0, settings)


def test_training_rows_label_the_transfer_set_by_the_objective(tiny):
    settings, bundle = tiny
    n = settings["n_train"]
    ids, mask, y = exp.training_rows(bundle, 0, "hard", 0, settings)
    assert ids is bundle["ids"] and (y == bundle["y"]).all()                # 0×: the labelled pairs alone
    ids, mask, y = exp.training_rows(bundle, 2, "hard", 0, settings)
    assert ids.shape[0] == mask.shape[0] == len(y) == 3 * n
    assert (y[:n] == bundle["y"]).all()                                     # true labels first
    assert (y[n:] == exp.teacher_argmax(bundle["teacher"], ids[n:], mask[n:])).all()  # then the teacher's argmax
    s_ids, s_mask, s_y = exp.training_rows(bundle, 2, "soft", 0, settings)
    assert (s_ids == ids).all() and (s_mask == mask).all()                 # the same pairs for every objective
    assert (s_y[:n] == bundle["y"]).all() and (s_y[n:] == exp.IGNORE).all()  # soft: no label on transfer pairs


def test_soft_objective_on_unlabelled_rows_is_the_soft_term_alone(tiny):
    from minilm.downstream.distill import distill_objective
    settings, bundle = tiny
    student = distillation.make_student(bundle, 1, "soft", 0)
    ids, mask = bundle["ids"][:8], bundle["mask"][:8]
    w = distillation.weights_for("soft", settings["temperature"])
    loss, terms = distill_objective(student, bundle["teacher"], ids, mask, np.full(8, exp.IGNORE), w)
    assert terms["hard"] == 0.0 and terms["soft"] > 0
    assert math.isclose(loss.item(), w.soft * terms["soft"], rel_tol=1e-6)


def test_zero_transfer_rows_are_the_distillation_students_and_steps_are_counted(tiny):
    settings, _ = tiny
    same = dict(settings, **{"student_layers": 1})
    for objective, old in (("hard", "1 layer: hard labels"), ("cosine", "1 layer: soft + cosine")):
        new = exp.run_one(exp.condition_name(0, objective), 0, same)
        assert new["steps"] == settings["student_steps"]
        assert new["accuracy"] == distillation.run_one(old, 0, same)["accuracy"], objective
    row = exp.run_one(exp.condition_name(2, "soft"), 0, same)
    assert row["steps"] == settings["student_steps"] and row["params"] == new["params"]
    teacher = exp.run_one("teacher (2 layers)", 0, same)
    assert math.isclose(row["teacher_lead"], teacher["accuracy"] - row["accuracy"])
    with pytest.raises(ConfigError, match="unknown condition"):
        exp.run_one("transfer 3×: soft targets", 0, same)


def test_the_from_scratch_arm_starts_from_random_weights_on_few_labels(tiny, monkeypatch):
    settings, bundle = tiny
    settings = dict(settings, scratch_labelled=5, scratch_transfer=7)
    ids, mask, y = exp.scratch_rows(bundle, "hard", 0, settings)
    assert len(y) == 12 and (y[:5] == bundle["y"][:5]).all()
    assert (y[5:] == exp.teacher_argmax(bundle["teacher"], ids[5:], mask[5:])).all()
    assert (exp.scratch_rows(bundle, "soft", 0, settings)[2][5:] == exp.IGNORE).all()
    alone = exp.scratch_rows(bundle, "labels", 0, settings)               # Hinton's baseline: no teacher, no transfer
    assert len(alone[2]) == 5 and (alone[2] == bundle["y"][:5]).all() and (alone[0] == bundle["ids"][:5]).all()
    plan = exp.plan(replace(exp.CONFIG.quick(), scratch_labelled=5, scratch_transfer=7, scratch_temperatures=(3.0,)))
    assert plan.conditions[-3:] == ["from scratch, 5 + 0: the labels alone (no teacher)",
                                    "from scratch, 5 + 7: hard labels", "from scratch, 5 + 7: soft targets, T = 3"]
    from minilm.downstream import distill
    built, build = [], distill.build_student
    monkeypatch.setattr(distill, "build_student", lambda *a, **k: built.append(k) or build(*a, **k))
    same = dict(settings, student_layers=1, scratch_temperatures=[3.0])
    soft = exp.run_one("from scratch, 5 + 7: soft targets, T = 3", 0, same)
    assert soft["steps"] == settings["student_steps"]
    assert built[-1]["init_from_teacher"] is False                        # random weights, not the teacher's
    warm = exp.run_one(exp.condition_name(0, "soft"), 0, same)
    assert soft["params"] == warm["params"]                                # the same student network
    labels = exp.run_one("from scratch, 5 + 0: the labels alone (no teacher)", 0, same)
    assert built[-1]["init_from_teacher"] is False and labels["steps"] == settings["student_steps"]
    assert labels["params"] == soft["params"]


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path, capsys):
    from minilm.cli import main
    r = quick_run(exp.NAME, tmp_path)   # seed 0: the recorded numbers
    conditions = exp.plan(exp.CONFIG.quick()).conditions
    assert r["conditions"] == conditions and r["seeds"] == [0, 1, 2] and len(r["runs"]) == 3 * len(conditions)
    assert (tmp_path / f"{exp.NAME}.png").read_bytes()[:4] == b"\x89PNG" and (tmp_path / f"{exp.NAME}.md").exists()
    steps = {r["summary"]["steps"][c]["mean"] for c in conditions[1:]}
    assert steps == {exp.CONFIG.quick().student_steps}                   # equal optimizer steps
    for c in conditions:
        values = r["summary"]["accuracy"][c]["values"]
        assert len(values) == 3 and all(0.0 <= v <= 1.0 for v in values), (c, values)


def test_the_main_claim_compares_soft_targets_with_the_labels_alone():
    """Hinton's comparison is a student trained on the labels (146 MNIST errors) against the same
    student with soft targets (74); the teacher's hard labels of the transfer pairs come second."""
    s = exp.plan(exp.CONFIG()).settings
    main, dark = exp.claims(s)[:2]
    assert main.below == ("from scratch, 30 + 0: the labels alone (no teacher)",)
    assert set(main.above) == {exp.scratch_name(s, "soft", T) for T in s["scratch_temperatures"]}
    assert dark.below == ("from scratch, 30 + 270: hard labels",) and dark.why_not
    assert exp.scratch_name(s, "soft", 2.0) not in dark.above           # the raised temperatures only
