"""The ``masking`` (RoBERTa static vs dynamic masking) and ``new-york`` (independent vs factorised
name prediction) experiments: their helpers, fast; one quick run of each through the CLI, slow."""
import json
import math
from dataclasses import replace

import numpy as np
import pytest

from minilm.experiments import masking, new_york
from minilm.recipes.config import override
from tests.models.experiment_quick import quick_run


# ---- masking ------------------------------------------------------------------------------------

def test_masking_plan_sizes_and_overrides():
    quick, full = masking.plan(masking.CONFIG.quick()), masking.plan(masking.CONFIG())
    assert quick.conditions == full.conditions and masking.REFERENCE in full.conditions
    assert quick.settings["steps"] < full.settings["steps"] and quick.settings["docs"] <= full.settings["docs"]
    assert [m.key for m in full.metrics][:2] == ["heldout_accuracy", "heldout_loss"]
    json.dumps(full.settings)  # JSON-able
    s = masking.plan(override(masking.CONFIG(), docs=12, steps=7)).settings
    assert (s["docs"], s["steps"], s["eval_docs"]) == (12, 7, full.settings["eval_docs"])


def test_epochs_seen_counts_block_reads():
    assert masking.epochs_seen({"steps": 100, "batch_size": 32}, 64) == 50.0
    assert masking.epochs_seen({"steps": 100, "batch_size": 32}, 0) == 3200.0  # no division by zero


def test_masked_pairs_are_reproducible_and_differ_by_prefix():
    import functools
    from minilm.corruption import roberta_mask
    masker = functools.partial(roberta_mask, mask_id=4, vocab_size=50, nspecial=5, pad_id=1, prob=0.3)
    blocks = [np.arange(5, 45), np.arange(10, 30)]
    a = masking.masked_pairs(blocks, masker, seed_prefix=[0, 98, 0])
    b = masking.masked_pairs(blocks, masker, seed_prefix=[0, 98, 0])
    c = masking.masked_pairs(blocks, masker, seed_prefix=[0, 98, 1])
    assert all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(a, b))
    assert not all(np.array_equal(x[1], y[1]) for x, y in zip(a, c))
    assert len(a) == 2 and a[1][0].shape == (20,)


def test_mlm_scores_counts_only_masked_tokens():
    from autograd.tensor import Tensor

    class Oracle:  # predicts the id it is told to, for every position: 7 everywhere
        def eval(self):
            pass

        def __call__(self, ids, attention):
            logits = np.full(ids.shape + (10,), -5.0, dtype=np.float32)
            logits[..., 7] = 5.0
            return {"logits": Tensor(logits)}

    pad = 1
    pairs = [(np.array([0, 4, 4, 9]), np.array([pad, 7, 8, pad])),     # one right, one wrong
             (np.array([0, 4]), np.array([pad, 7]))]                    # one right; padded in the batch
    s = masking.mlm_scores(Oracle(), pairs, pad)
    assert s["accuracy"] == pytest.approx(2 / 3)
    assert s["loss"] > 0 and math.isfinite(s["loss"])


def test_masking_unknown_condition_raises():
    settings = masking.plan(override(masking.CONFIG.quick(), docs=6, eval_docs=4)).settings
    with pytest.raises(ValueError, match="unknown condition"):
        masking.run_one("half-static", 0, settings)


def test_masking_on_a_corpus_file_trains_on_its_first_docs_and_holds_out_its_end(tmp_path, monkeypatch):
    """--corpus: the small training corpus is the text's first --docs documents, the held-out
    documents its last --eval-docs; the reference row reads both without training anything."""
    from minilm.data import write_corpus
    from minilm.recipes import common
    docs = [[f"document {i} tells of the {w} and the river ." for w in ("dog", "cat", "bird")] for i in range(30)]
    path = tmp_path / "c.txt"
    write_corpus(docs, path)
    read = []
    real = common.read_corpus
    monkeypatch.setattr(common, "read_corpus", lambda p: read.append(real(p)) or read[-1])
    settings = masking.plan(override(masking.CONFIG.quick(), corpus=str(path), docs=6, eval_docs=4,
                                     finetune_steps=0)).settings
    out = masking.run_one(masking.REFERENCE, 0, settings)
    assert read == [docs[:6]]                                 # the recipe read the first 6 documents alone
    assert 0.0 <= out["heldout_accuracy"] <= 1.0 and math.isfinite(out["heldout_loss"])


def test_masking_fine_tunes_unless_told_not_to_and_its_reference_is_the_untrained_encoder(monkeypatch):
    """--finetune-steps N (150 by default) adds the paper's readout: every condition's trained encoder,
    and for the reference row the same encoder untrained, each fine-tuned the same way; 0: none."""
    full = masking.plan(masking.CONFIG())
    assert full.metrics[-1].key == "finetuned" and full.settings["finetune_steps"] == 150
    assert [c.metric for c in full.claims] == ["heldout_accuracy"] * 2        # the sharper readout here
    no_tuning = masking.plan(override(masking.CONFIG(), finetune_steps=0))
    assert "finetuned" not in [m.key for m in no_tuning.metrics] and "paper fine-tunes" in no_tuning.notes[-1]
    cfg = override(masking.CONFIG.quick(), docs=6, eval_docs=4, finetune_steps=3)
    plan = masking.plan(cfg)
    assert plan.metrics[-1].key == "finetuned" and "3 steps" in plan.notes[-1]
    seen = []

    def fake(model, tokenizer, seed, steps):
        seen.append((float(np.abs(model.state_dict()["lm_head.bias"]).sum()), steps))
        return 0.5
    monkeypatch.setattr(masking, "finetuned", fake)
    assert masking.run_one(masking.REFERENCE, 0, plan.settings)["finetuned"] == 0.5
    assert seen == [(0.0, 3)]                                          # untrained: its output bias is still 0
    off = masking.plan(override(cfg, finetune_steps=0)).settings
    assert "finetuned" not in masking.run_one(masking.REFERENCE, 0, off) and len(seen) == 1


# ---- new-york -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def name_tok():
    from minilm.tokenizers import WordPieceTokenizer
    from minilm.data import multi_token_names
    text = [f"the dog from {n} runs ." for n in multi_token_names()] * 3
    return WordPieceTokenizer.train(text, 120)


def test_new_york_plan_and_no_bert():
    full = new_york.plan(new_york.CONFIG())
    assert full.conditions == new_york.CONDITIONS and [m.key for m in full.metrics][:2] == \
        ["joint_accuracy", "coherent_rate"]
    assert new_york.plan(new_york.CONFIG.quick()).settings["steps"] < full.settings["steps"]
    p = new_york.plan(replace(new_york.CONFIG(), steps=11, K=3.0, no_bert=True))
    assert new_york.BERT not in p.conditions and p.settings["steps"] == 11 and p.settings["K"] == 3.0
    json.dumps(p.settings)


def test_most_frequent_name_and_fill(name_tok):
    enc = name_tok.encode
    stream = np.array(enc("the dog from los angeles runs . the cat from new york runs . "
                          "a dog from los angeles . new delhi"), dtype=np.int64)
    best = new_york.most_frequent_name(stream, name_tok)
    assert best == tuple(enc("los angeles"))
    from minilm.models.xlnet_predict import name_probes, score_name_predictions
    probes = name_probes(stream, name_tok, block_size=8)
    filled = new_york.fill_names(probes, best)
    assert np.array_equal(filled[~probes["is_target"]], probes["input_ids"][~probes["is_target"]])
    scores = score_name_predictions(filled, probes)
    assert scores["n"] == 4 and scores["joint_accuracy"] == 0.5 and scores["coherent_rate"] == 1.0
    three = {"input_ids": np.zeros((1, 5), dtype=np.int64), "is_target": np.array([[0, 1, 1, 1, 0]], bool)}
    assert new_york.fill_names(three, (3, 4))[0].tolist() == [0, 3, 4, 4, 0]  # padded with its last id


def test_bert_predict_only_changes_the_names(name_tok):
    from minilm.models.bert import BertConfig
    from minilm.models.bert_heads import BertForPreTraining
    from minilm.models.xlnet_predict import name_probes
    model = BertForPreTraining(BertConfig(vocab_size=name_tok.vocab_size, max_position_embeddings=12, n_layer=1,
                                          n_head=2, n_embd=16), rng=np.random.default_rng(0))
    stream = np.array(name_tok.encode("the dog from new york runs . the cat from hong kong runs ."), dtype=np.int64)
    probes = name_probes(stream, name_tok, block_size=8)
    out = new_york.bert_predict(model, name_tok, probes)
    assert out.shape == probes["input_ids"].shape
    assert np.array_equal(out[~probes["is_target"]], probes["input_ids"][~probes["is_target"]])
    assert out.min() >= 0 and out.max() < name_tok.vocab_size


def test_new_york_unknown_condition_raises():
    with pytest.raises(ValueError, match="unknown condition"):
        new_york.run_one("GPT", 0, new_york.plan(new_york.CONFIG.quick()).settings)


# ---- the whole experiments, quick, through the command line ------------------------------------

def _run_cli(name, tmp_path, capsys):
    from minilm.cli import main
    out = quick_run(name, tmp_path)   # seed 0: the recorded numbers
    assert out["quick"] and out["seeds"] == [0, 1, 2]
    assert len(out["runs"]) == 3 * len(out["conditions"])
    for r in out["runs"]:
        assert all(math.isfinite(v) for v in r["metrics"].values())
    assert (tmp_path / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    assert "| condition" in (tmp_path / f"{name}.md").read_text()
    return out


@pytest.mark.slow
def test_masking_quick_run(tmp_path, capsys):
    out = _run_cli("masking", tmp_path, capsys)
    acc = out["summary"]["heldout_accuracy"]
    seen, fresh = out["summary"]["train_seen_accuracy"], out["summary"]["train_fresh_accuracy"]
    # every model beats always-the-most-frequent-token on held-out text, and static x1 has learnt its
    # one mask per block better than new masks of the same text
    for c in masking.CONDITIONS:
        assert acc[c]["mean"] > acc[masking.REFERENCE]["mean"]
    assert seen["static x1"]["mean"] > fresh["static x1"]["mean"]


@pytest.mark.slow
def test_new_york_quick_run(tmp_path, capsys):
    out = _run_cli("new-york", tmp_path, capsys)
    s = out["summary"]
    for seed in out["seeds"]:  # every row of a seed is scored on the same probes
        assert len({r["metrics"]["n"] for r in out["runs"] if r["seed"] == seed}) == 1
    for metric in ("joint_accuracy", "token_accuracy", "coherent_rate"):
        for c in out["conditions"]:
            assert 0.0 <= s[metric][c]["mean"] <= 1.0
    # the reference always writes a real name of two or more tokens: nearly all probes are "real"
    assert s["coherent_rate"][new_york.REFERENCE]["mean"] > 0.5
