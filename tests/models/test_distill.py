"""Distillation (minilm/downstream/distill.py, minilm/recipes/distill.py): the T² argument, a frozen teacher,
every loss term, and the recipe end to end on a tiny budget."""

import numpy as np
import pytest

import autograd.functional as F
from autograd import Tensor, optim
from autograd.errors import ConfigError
from minilm.downstream import distill
from minilm.downstream.distill import (DistillWeights, DistilStudent, StudentConfig, attention_scores, default_layer_map,
                            distill_objective, inference_parameters, teacher_state_index)
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForSequenceClassification
from minilm.recipes.config import override


def test_soft_gradient_scales_as_one_over_T_squared_without_the_factor():
    """Hinton §2.1, the twin of the graded test: the raw KL's gradient shrinks as 1/T², the T²-scaled
    soft_target_loss keeps it level."""
    rng = np.random.default_rng(0)
    s, t = rng.normal(size=(8, 6)), rng.normal(size=(8, 6))
    s -= s.mean(-1, keepdims=True)
    t -= t.mean(-1, keepdims=True)
    raw, scaled = [], []
    temps = np.array([4.0, 8.0, 16.0, 32.0])
    for T in temps:
        x = Tensor(s.copy(), requires_grad=True)
        F.kl_div(F.log_softmax(x / T), F.softmax(Tensor(t) / T), reduction="batchmean").backward()
        raw.append(np.linalg.norm(x.grad))
        x = Tensor(s.copy(), requires_grad=True)
        distill.soft_target_loss(x, Tensor(t), T).backward()
        scaled.append(np.linalg.norm(x.grad))
    raw, scaled = np.array(raw), np.array(scaled)
    np.testing.assert_allclose(raw * temps ** 2 / (raw[-1] * temps[-1] ** 2), 1.0, rtol=0.1)  # ∝ 1/T²
    np.testing.assert_allclose(scaled / scaled[-1], 1.0, rtol=0.1)                             # level
    np.testing.assert_allclose(scaled, raw * temps ** 2, rtol=1e-6)


def test_default_layer_map_is_distilberts():
    assert default_layer_map(12, 6) == [0, 2, 4, 7, 9, 11]
    assert default_layer_map(4, 2) == [0, 3]
    assert default_layer_map(3, 3) == [0, 1, 2]
    with pytest.raises(ConfigError):
        default_layer_map(2, 3)
    assert [teacher_state_index(m, 2, 4) for m in range(3)] == [0, 2, 4]      # TinyBERT's k·m


def _pair(student_width=16, teacher_layers=3, student_layers=2, seed=0):
    t_cfg = BertConfig(vocab_size=40, max_position_embeddings=10, n_layer=teacher_layers, n_head=2, n_embd=16,
                       dropout=0.0)
    s_cfg = StudentConfig(vocab_size=40, max_position_embeddings=10, n_layer=student_layers, n_head=2,
                          n_embd=student_width, dropout=0.0, teacher_n_embd=16)
    teacher = BertForSequenceClassification(t_cfg, 2, rng=np.random.default_rng(seed))
    student = DistilStudent(s_cfg, 2, rng=np.random.default_rng(seed + 1))
    rng = np.random.default_rng(seed + 2)
    ids = rng.integers(3, 40, size=(4, 7))
    mask = np.ones((4, 7), dtype=bool)
    mask[1, 5:] = mask[3, 3:] = False
    ids[~mask] = 0
    return student, teacher, ids, mask, rng.integers(0, 2, size=4)


def test_attention_scores_give_the_blocks_probabilities():
    student, teacher, ids, mask, _ = _pair()
    out = teacher.bert(ids, None, mask, output_hidden_states=True)
    for l, block in enumerate(teacher.bert.encoder.layer):
        scores = attention_scores(block, out["hidden_states"][l]).data                 # (B, H, T, T)
        scores = np.where(mask[:, None, None, :], scores, -np.inf)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        np.testing.assert_allclose(probs, block.attn.last_attention, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("weights", [
    DistillWeights(),
    DistillWeights(hard=0, soft=0, logit_mse=1.0),
    DistillWeights(hard=0, soft=0, cos=1.0),
    DistillWeights(hard=0, soft=0, hidden_mse=1.0),
    DistillWeights(hard=0, soft=0, attention=1.0),
    DistillWeights(hard=0.2, soft=0.2, logit_mse=0.1, cos=0.1, hidden_mse=0.1, attention=0.1),
])
def test_training_moves_the_student_and_never_the_teacher(weights):
    student, teacher, ids, mask, labels = _pair()
    before = teacher.state_dict()
    opt = optim.AdamW(student.parameters(), lr=2e-3)
    first = None
    for _ in range(5):
        loss, terms = distill_objective(student, teacher, ids, mask, labels, weights)
        first = loss.item() if first is None else first
        assert np.isfinite(loss.item()) and terms
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < first
    for k, v in teacher.state_dict().items():
        np.testing.assert_array_equal(v, before[k], err_msg=f"teacher parameter {k} changed")
    assert all(p.grad is None for p in teacher.parameters()), "a gradient reached the teacher"


class _NoTeacher:
    """Stands in for a teacher that must not be asked: any forward pass fails the test."""
    training = False

    def eval(self):
        return self

    def train(self, mode=True):
        return self

    def __getattr__(self, name):
        raise AssertionError(f"the teacher was read ({name}) by a loss that needs only the labels")


def test_the_labels_alone_never_run_the_teacher():
    student, teacher, ids, mask, labels = _pair()
    hard = DistillWeights(hard=1.0, soft=0.0)
    want, _ = distill_objective(student, teacher, ids, mask, labels, hard)
    got, terms = distill_objective(student, _NoTeacher(), ids, mask, labels, hard)
    assert got.item() == want.item() and list(terms) == ["hard"]
    assert distill.frozen_targets(teacher, ids, mask, hard) is None


@pytest.mark.parametrize("weights", [DistillWeights(), DistillWeights(hard=0.2, soft=0.5, logit_mse=0.1, cos=0.3)])
def test_the_recipes_frozen_targets_give_the_loss_of_a_teacher_forward_per_batch(weights):
    """StudentRecipe computes the teacher's logits and last states once for every row; a batch cut
    to its longest row must see the loss (and the student's gradients) of the teacher run on it."""
    student, teacher, ids, mask, labels = _pair()
    recipe = distill.StudentRecipe(student, teacher, None, ids, mask, labels, weights, batch_size=3)
    for k in range(4):
        batch = recipe.batch(np.random.default_rng(k))
        got, got_terms = recipe.loss(student, batch)
        student.zero_grad()
        got.backward()
        got_grads = [p.grad.copy() for p in student.parameters() if p.grad is not None]
        want, want_terms = distill_objective(student, teacher, batch["input_ids"], batch["attention_mask"],
                                             batch["labels"], weights)
        student.zero_grad()
        want.backward()
        want_grads = [p.grad for p in student.parameters() if p.grad is not None]
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5)
        assert sorted(got_terms) == sorted([*want_terms, "tokens"]) and len(got_grads) == len(want_grads)
        for g, w in zip(got_grads, want_grads):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-7)
    assert recipe._targets[2][0].shape == (4, 2)                  # (N, K): computed once, for every row


def test_frozen_targets_refuse_the_terms_that_need_the_teachers_inner_states():
    student, teacher, ids, mask, labels = _pair()
    assert distill.frozen_targets(teacher, ids, mask, DistillWeights(hard=0, soft=0, hidden_mse=1)) is None
    assert distill.frozen_targets(teacher, ids, mask, DistillWeights(hard=0, soft=0, attention=1)) is None
    logits, last = distill.frozen_targets(teacher, ids, mask, DistillWeights(hard=0, soft=0, cos=1))
    with pytest.raises(ConfigError, match="hidden-MSE and attention"):
        distill_objective(student, teacher, ids, mask, labels, DistillWeights(hard=0, soft=0, hidden_mse=1),
                          teacher_out=(logits, last))
    with pytest.raises(ConfigError, match="last states"):
        distill_objective(student, teacher, ids, mask, labels, DistillWeights(hard=0, soft=0, cos=1),
                          teacher_out=(logits, None))


def test_hidden_mse_trains_the_projection_of_a_narrow_student():
    student, teacher, ids, mask, labels = _pair(student_width=8)
    W0 = student.fit_dense.weight.data.copy()
    loss, _ = distill_objective(student, teacher, ids, mask, labels, DistillWeights(hard=0, soft=0, hidden_mse=1))
    loss.backward()
    assert student.fit_dense.weight.grad is not None and np.any(student.fit_dense.weight.grad)
    assert student.projection().shape == (8, 16)
    assert inference_parameters(student) == sum(p.size for p in student.parameters()) - W0.size
    with pytest.raises(ConfigError):
        distill_objective(student, teacher, ids, mask, labels, DistillWeights(hard=0, soft=0))


def test_init_from_teacher_matches_its_layers():
    student, teacher, *_ = _pair(teacher_layers=4)
    distill.init_student_from_teacher(student.bert, teacher.bert, default_layer_map(4, 2))
    for i, j in enumerate([0, 3]):
        for k, v in student.bert.encoder.layer[i].state_dict().items():
            np.testing.assert_array_equal(v, teacher.bert.encoder.layer[j].state_dict()[k])


def _args(**kw):
    from minilm.recipes import distill as recipe
    return override(recipe.DistillRecipeConfig(), **{"teacher_layers": 2, "n_embd": 16, "teacher_pretrain_steps": 2,
                                       "teacher_steps": 20, "docs": 12, "vocab_size": 150, "n_train": 80,
                                       "n_test": 40, "batch_size": 8, "student_layers": 1, **kw})


def test_recipe_end_to_end_and_teacher_reuse(tmp_path):
    from minilm.recipes import distill as recipe
    from minilm.train import TrainConfig, train
    args = _args(out=tmp_path, alpha_cos=0.5, alpha_att=0.5)
    r = recipe.DistillRecipe(args)
    assert r.layer_map == [0] and (tmp_path / "teacher.npz").exists()
    teacher_before = r.teacher.state_dict()
    summary = train(r, TrainConfig(steps=4, eval_every=2, checkpoint_every=4, warmup=1), tmp_path,
                    progress=False, plot=False)
    for k in ("initial_loss", "final_loss"):
        assert np.isfinite(summary[k])
    m, b = summary["metrics"], summary["baselines"]
    assert 0 <= m["accuracy"] <= 1 and m["retained"] == pytest.approx(m["accuracy"] / m["teacher_accuracy"])
    assert b["student_parameters"] < b["teacher_parameters"] and b["speedup"] > 0
    for k, v in r.teacher.state_dict().items():
        np.testing.assert_array_equal(v, teacher_before[k])
    assert "retained" in recipe.DistillRecipe.describe(summary)
    # the saved teacher loads back, and the saved student is a checkpoint like any other
    again = recipe.DistillRecipe(_args(teacher=tmp_path / "teacher.npz", student_n_embd=8, alpha_hidden=1.0))
    assert again.teacher_accuracy == pytest.approx(r.teacher_accuracy)
    assert again.layer_map is None                               # a narrower student starts at random
    from minilm.checkpoint import load_model
    model, tok, meta = load_model(tmp_path / "checkpoint.npz")
    assert isinstance(model, DistilStudent) and meta["family"] == "distill"


def test_recipe_rejects_cosine_with_a_narrower_student(tmp_path):
    from minilm.recipes import distill as recipe
    with pytest.raises(ConfigError, match="equal widths"):
        recipe.DistillRecipe(_args(out=tmp_path, student_n_embd=8, alpha_cos=1.0, teacher_steps=1))


@pytest.mark.parametrize("quiet", [True, False])
def test_train_distill_no_progress_quiets_the_teacher_too(tmp_path, quiet):
    """`minilm train distill --no-progress` printed two progress bars anyway: the teacher's pre-training
    and fine-tuning, built before the student's loop. Run as a user runs it, in a subprocess."""
    import subprocess
    import sys
    cmd = [sys.executable, "-m", "minilm.cli", "train", "distill", "--out", str(tmp_path), "--docs", "12",
           "--vocab-size", "120", "--teacher-layers", "2", "--n-embd", "16", "--teacher-pretrain-steps", "2",
           "--teacher-steps", "2", "--n-train", "64", "--n-test", "32", "--steps", "2"]
    run = subprocess.run(cmd + (["--no-progress"] if quiet else []), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    bars = [name for name in ("pre-training:", "fine-tuning:", "it/s") if name in run.stderr]
    assert (not bars) if quiet else bars, run.stderr[-2000:]
    assert "retained" in run.stdout


def test_train_distill_pretrains_its_teacher_on_the_corpus_given(tmp_path):
    """``--corpus`` is the teacher's pre-training text (its WordPiece vocabulary too): a word that only
    the file holds is in the vocabulary; and with ``--teacher`` the option is refused, not ignored."""
    from minilm.recipes import distill as recipe
    text = tmp_path / "text.txt"
    text.write_text("\n\n".join("the zyzzyva sleeps .\nthe zyzzyva eats ." for _ in range(40)), encoding="utf-8")
    with_file = recipe.DistillRecipe(_args(corpus=str(text), out=tmp_path, teacher_steps=2))
    synthetic = recipe.DistillRecipe(_args(out=tmp_path / "synthetic", teacher_steps=2))
    assert [with_file.tokenizer.decode(with_file.tokenizer.encode("zyzzyva"))] == ["zyzzyva"]
    assert synthetic.tokenizer.decode(synthetic.tokenizer.encode("zyzzyva")) != "zyzzyva"     # [UNK] or pieces
    with pytest.raises(ConfigError, match="already pre-trained"):
        recipe.DistillRecipe(_args(corpus=str(text), teacher=tmp_path / "teacher.npz"))
