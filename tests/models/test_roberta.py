"""RoBERTa: the model (BERT encoder + MLM head, no NSP, one segment) and its recipe (byte-level BPE,
FULL-/DOC-SENTENCES packing, dynamic vs static masking read epoch by epoch)."""

import numpy as np
import pytest

import autograd.functional as F
from autograd import Tensor
from minilm.downstream.finetune import finetune_sentiment
from minilm.models.roberta import RobertaConfig, RobertaForMaskedLM
from minilm.recipes import roberta as recipe
from minilm.recipes.config import override


def _model(**kw):
    cfg = RobertaConfig(**{**dict(vocab_size=40, max_position_embeddings=16, n_layer=1, n_head=2, n_embd=16,
                                  dropout=0.0), **kw})
    return RobertaForMaskedLM(cfg, rng=np.random.default_rng(0))


def test_no_nsp_head_no_pooler_one_segment():
    model = _model()
    names = [n for n, _ in model.named_parameters()]
    assert not any("seq_relationship" in n or "pooler" in n or "nsp" in n for n in names)
    assert model.roberta.embeddings.token_type_embeddings.weight.shape[0] == 1, "one segment row"
    assert model.lm_head.decoder.weight is model.roberta.embeddings.word_embeddings.weight, "tied decoder"
    out = model(np.zeros((2, 5), dtype=np.int64))
    assert set(out) == {"logits", "loss", "last_hidden_state"} and out["loss"] is None


def test_forward_loss_is_the_mean_ce_over_masked_positions():
    model = _model()
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 40, size=(3, 10))
    labels = np.where(rng.random((3, 10)) < 0.3, ids, -100)
    mask = np.ones((3, 10), dtype=bool)
    mask[2, 7:] = False
    out = model(ids, mask, labels=labels)
    assert out["logits"].shape == (3, 10, 40)
    ref = F.cross_entropy(Tensor(out["logits"].data), labels).item()
    assert np.isclose(out["loss"].item(), ref, rtol=1e-5)
    assert np.allclose(model.encode(ids, mask).data, out["last_hidden_state"].data)


def test_padding_does_not_change_real_positions():
    model = _model()
    ids = np.array([[0, 7, 8, 9, 2, 1, 1]])
    short = model(ids[:, :5])["logits"].data
    padded = model(ids, ids != 1)["logits"].data[:, :5]
    assert np.allclose(short, padded, atol=1e-5)


def test_checkpoint_rebuilds_the_model(tmp_path):
    from minilm.checkpoint import load_model, model_meta, save_checkpoint
    model = _model()
    save_checkpoint(tmp_path / "c.npz", model=model, meta={"family": "roberta", **model_meta(model, model.config)})
    again, _, _ = load_model(tmp_path / "c.npz")
    ids = np.array([[0, 5, 6, 2]])
    assert np.allclose(again(ids)["logits"].data, model.eval()(ids)["logits"].data)


# ---------------------------------------------------------------- the recipe

def _recipe(**kw):
    cfg = override(recipe.RobertaRecipeConfig(), **{**dict(docs=40, tokens_per_sample=32, n_layer=1, n_head=2, n_embd=16,
                                             batch_size=8, vocab_size=300), **kw})
    return recipe.RobertaRecipe(cfg)


@pytest.fixture(scope="module")
def dynamic():
    return _recipe()


def test_blocks_start_with_bos_and_fit(dynamic):
    tok = dynamic.tokenizer
    assert all(b[0] == tok.bos_id and len(b) <= 32 for b in dynamic.train_blocks)
    assert sum(int((b == tok.eos_id).sum()) for b in dynamic.train_blocks) > 0, "FULL-SENTENCES puts </s> between documents"
    doc = _recipe(packing="doc")
    assert all(int((b == tok.eos_id).sum()) == 0 for b in doc.train_blocks), "DOC-SENTENCES has no separator"


def test_epoch_schedule_reads_every_sequence_once_per_epoch(dynamic):
    N, B = len(dynamic.train_blocks), dynamic.batch_size
    steps = -(-3 * N // B)
    seen = [pair for s in range(steps) for pair in dynamic.epoch_schedule(s)]
    for epoch in range(2):
        indices = sorted(i for e, i in seen if e == epoch)
        assert indices == list(range(N)), f"epoch {epoch} does not read each sequence exactly once"
    assert dynamic.epoch_schedule(5) == dynamic.epoch_schedule(5)


def test_step_is_read_back_from_the_training_generator(dynamic):
    assert recipe.step_of(np.random.default_rng([3, 17]), fallback=-1) == 17
    assert recipe.step_of(np.random.default_rng(3), fallback=-1) == -1
    a = dynamic.batch(np.random.default_rng([0, 9]))
    dynamic.batch(np.random.default_rng([0, 2]))
    b = dynamic.batch(np.random.default_rng([0, 9]))
    for k in a:
        assert np.array_equal(a[k], b[k]), "the batch of a step must not depend on what was drawn before (resume)"


def test_dynamic_masks_differ_per_epoch_and_repeat_per_seed_epoch_index(dynamic):
    data = dynamic.data
    masks = [data.get(0, e)[0] for e in range(12)]
    assert len({m.tobytes() for m in masks}) == 12, "dynamic masking repeated a mask across epochs"
    assert np.array_equal(data.get(3, 4)[0], data.get(3, 4)[0])
    again = _recipe().data
    assert np.array_equal(again.get(3, 4)[1], data.get(3, 4)[1]), "same (seed, epoch, index) -> same mask"


def test_static_masks_repeat_with_period_static_copies():
    data = _recipe(masking="static", static_copies=4).data
    masks = [data.get(1, e)[0] for e in range(9)]
    assert np.array_equal(masks[0], masks[4]) and np.array_equal(masks[1], masks[5]) and np.array_equal(masks[0], masks[8])
    assert len({m.tobytes() for m in masks[:4]}) > 1, "the static copies should differ from each other"


def test_batch_labels_follow_the_fairseq_targets(dynamic):
    batch = dynamic.batch(np.random.default_rng([0, 0]))
    ids, labels, mask = batch["input_ids"], batch["labels"], batch["attention_mask"]
    assert ids.shape == labels.shape == mask.shape and ids.shape[0] == 8
    assert (labels[~mask] == -100).all(), "padding is never predicted"
    rate = (labels[mask] != -100).mean()
    assert 0.08 < rate < 0.25, f"about 15% of the tokens should be predicted, got {rate:.2%}"


def test_training_a_few_steps_lowers_the_loss(tmp_path, dynamic):
    from minilm.train import TrainConfig, train
    summary = train(dynamic, TrainConfig(steps=25, lr=3e-3, warmup=3, eval_every=25, checkpoint_every=25),
                    tmp_path, progress=False, plot=False)
    assert summary["final_loss"] < summary["initial_loss"]
    assert set(summary["baselines"]) == {"most_frequent_token_accuracy", "unigram_loss"}
    assert "MLM accuracy" in recipe.RobertaRecipe.describe(summary)


def test_finetune_sentiment_returns_accuracies(dynamic):
    result = finetune_sentiment(dynamic.model, dynamic.tokenizer, steps=20, n_train=200, n_test=100)
    for k in ("accuracy", "negation_accuracy", "plain_accuracy", "bow_accuracy"):
        assert 0.0 <= result[k] <= 1.0
