"""``minilm experiment gpt-vs-bert`` (minilm/experiments/gpt_vs_bert.py): its plan, the shared text, the
equal-compute checks, the frozen features, the cloze, and (slow) the --quick run end to end."""
import json
import math
from dataclasses import asdict, replace

import numpy as np
import pytest

from minilm.cli import build_parser
from minilm.data import read_corpus
from minilm.experiments import EXPERIMENTS
from minilm.experiments import gpt_vs_bert as exp
from minilm.experiments import gpt_vs_bert_cloze as cloze
from minilm.experiments import gpt_vs_bert_readouts as readouts
from minilm.recipes.config import from_args
from tests.models.experiment_quick import quick_run


def test_registered_and_planned():
    assert EXPERIMENTS[exp.NAME] == "minilm.experiments.gpt_vs_bert"
    full, quick = exp.plan(exp.CONFIG()), exp.plan(exp.CONFIG.quick())
    assert full.conditions == quick.conditions == exp.CONDITIONS
    keys = [m.key for m in full.metrics]
    assert keys[:5] == ["agreement", "entailment", "sentiment", "sentiment_negated", "cloze"]
    assert {"perplexity", "parameters", "tokens"} <= set(keys)
    assert not next(m for m in full.metrics if m.key == "perplexity").higher_is_better
    for key in ("steps", "ft_steps", "n_embd", "docs", "test"):
        assert quick.settings[key] <= full.settings[key], key
    assert quick.settings["steps"] < full.settings["steps"]
    json.dumps(full.settings)
    assert any("Held equal" in n for n in full.notes) and any("71.0" in n for n in full.notes)
    args = build_parser().parse_args(["experiment", exp.NAME, "--steps", "7", "--corpus", "some.txt"])
    cfg = from_args(exp.CONFIG, args, base=exp.CONFIG())
    assert (cfg.steps, cfg.corpus) == (7, "some.txt")


def test_check_equal_passes_within_the_tolerance_and_fails_beyond():
    exp.check_equal("tokens", {"gpt": 1000, "bert": 960}, 0.05)
    with pytest.raises(exp.UnequalComputeError, match="tokens differ by 10.0%"):
        exp.check_equal("tokens", {"gpt": 1000, "bert": 900}, 0.05)
    with pytest.raises(exp.UnequalComputeError):
        exp.check_equal("parameters", {"gpt": 0, "bert": 0}, 0.05)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    settings = asdict(replace(exp.CONFIG.quick(), docs=12, task_text=40, vocab_size=200, n_embd=16, steps=2,
                              warmup=1, cloze_sentences=20, sentiment_train=20, entail_train=20, test=30))
    docs = exp.pretraining_documents(settings, 0)
    path = exp.write_corpus(docs, tmp_path_factory.mktemp("gvb") / "corpus.txt")
    gpt, bert = (exp.build_recipe(f, settings, 0, path) for f in ("gpt", "bert"))
    return settings, docs, path, gpt, bert


def test_both_recipes_read_the_same_text_with_the_same_vocabulary(tiny):
    settings, docs, path, gpt, bert = tiny
    assert read_corpus(path) == docs
    assert any("not" in s.split() for d in docs for s in d)          # the task text is in
    assert len(docs) == settings["docs"] + math.ceil((40 // 2 + 2 * (40 // 4)) / 8)   # 8 task sentences a document
    V = gpt.tokenizer.vocab_size
    assert gpt.tokenizer.convert_ids_to_tokens(list(range(V))) == bert.tokenizer.convert_ids_to_tokens(list(range(V)))
    assert exp.pretraining_documents(settings, 0) == docs and exp.pretraining_documents(settings, 1) != docs


def test_parameters_of_the_kept_networks_agree(tiny):
    settings, _, _, gpt, _ = tiny
    counts = exp.parameter_counts(gpt.tokenizer, settings)
    exp.check_equal("parameters", {k: counts[k] for k in ("gpt", "bert")}, 0.02)
    assert counts["gpt"] == exp.count_parameters(gpt.model) and counts["bert_heads"] > 0


def test_bert_batch_reads_as_many_tokens_as_a_gpt_step(tiny):
    settings, _, _, gpt, bert = tiny
    per_step = settings["batch_size"] * settings["seq_len"]
    bert.batch_size = exp.bert_batch_for_equal_tokens(bert, settings)
    assert bert.batch_size >= settings["batch_size"]
    counted, rng = exp.CountTokens(bert), np.random.default_rng(0)
    for _ in range(20):
        counted.loss(counted.model, counted.batch(rng))
    assert abs(counted.tokens / 20 - per_step) / per_step < 0.1
    g = exp.CountTokens(gpt)
    g.loss(g.model, g.batch(rng))
    assert g.tokens == per_step and g.family == "gpt"


def test_frozen_features_per_layer_and_gpt_reads_no_padding(tiny):
    settings, _, _, gpt, bert = tiny
    tok = gpt.tokenizer
    from minilm.downstream.finetune import encode_texts
    ids, mask = encode_texts(tok, ["the dog runs .", "the dog does not run near the river ."])
    C, L = settings["n_embd"], settings["n_layer"]
    for family, recipe in (("gpt", gpt), ("bert", bert)):
        f = readouts.frozen_features(family, recipe.model, ids, mask)
        assert f.shape == (2, 2 * L * C) and np.isfinite(f).all()
    alone, _ = encode_texts(tok, ["the dog runs ."])
    one = readouts.frozen_features("gpt", gpt.model, alone, np.ones_like(alone))
    np.testing.assert_allclose(one[0], readouts.frozen_features("gpt", gpt.model, ids, mask)[0], atol=1e-5)


def test_cloze_items_and_scorers(tiny):
    settings, docs, _, gpt, bert = tiny
    tok = gpt.tokenizer
    items = cloze.items(tok, [s for d in docs for s in d], settings, 0)
    assert 0 < len(items) <= settings["cloze_sentences"]
    for ids, t, cands in items:
        assert cands[0] == ids[t] and len(set(cands)) == settings["cloze_candidates"]
    for score in (cloze.gpt(gpt.model, tok, items), cloze.bert(bert.model, tok, items),
                  cloze.frequency(tok, gpt.train_ids, items)):
        assert 0.0 <= score <= 1.0


def test_agreement_rows_hide_the_subject_and_the_verb_decides_the_label(tiny):
    from minilm.data.synthetic import TOPICS
    from minilm.experiments import gpt_vs_bert_tokens as token_task
    tok = tiny[3].tokenizer
    split = token_task.agreement_split(tok, 40, np.random.default_rng(0))
    ids, pos, labels = split["ids"], split["positions"], split["labels"]
    assert (ids[np.arange(len(ids)), pos] == tok.mask_id).all() and (ids == tok.mask_id).sum() == len(ids)
    assert 0 < labels.mean() < 1
    plural_verbs = {plural for topic in TOPICS.values() for _, plural in topic.intransitive}
    for text, label in zip(split["texts"], labels):   # "the PREP the PLACE VERB .": the verb's form is the label
        assert label == (text.split()[-2] in plural_verbs), text


def test_gpts_state_at_the_subject_has_not_read_the_verb_and_berts_has(tiny):
    """The token-level task's premise: GPT's state at [MASK] is the same whatever follows; BERT's is not."""
    from minilm.data import pad_batch
    from minilm.experiments import gpt_vs_bert_tokens as token_task
    settings, _, _, gpt, bert = tiny
    tok = gpt.tokenizer
    rows = [tok.build_inputs(tok.encode("the") + [tok.mask_id] + tok.encode(right))[0]
            for right in ("near the house runs .", "near the houses run quickly .")]
    ids, mask = pad_batch(rows, tok.pad_id)
    split = {"ids": ids, "mask": mask, "positions": np.array([r.index(tok.mask_id) for r in rows])}
    g = token_task.token_features("gpt", gpt.model, split)
    b = token_task.token_features("bert", bert.model, split)
    np.testing.assert_allclose(g[0], g[1], atol=1e-5)
    assert np.abs(b[0] - b[1]).max() > 1e-4


def test_token_classifier_learns_from_the_labels_of_its_position(tiny):
    from minilm.experiments import gpt_vs_bert_tokens as token_task
    settings, _, _, gpt, bert = tiny
    data = token_task.agreement_data(gpt.tokenizer, dict(settings, agreement_train=16, test=16), 0)
    for family, recipe in (("gpt", gpt), ("bert", bert)):
        clf = token_task.TokenClassifier(family, recipe.model, seed=0, aux_weight=0.5)
        out = clf(data["train"]["ids"], data["train"]["mask"], data["train"]["positions"],
                  labels=data["train"]["labels"])
        assert out["logits"].shape == (16, 2) and np.isfinite(out["loss"].data)
        acc = token_task.finetune_accuracy(family, recipe.model, data, dict(settings, ft_steps=2), 0)
        assert 0.0 <= acc <= 1.0
    assert 0.0 <= token_task.reference_accuracy(data) <= 1.0


def test_bert_reads_the_entailment_pairs_with_the_segment_ids_it_was_pre_trained_with(tiny):
    settings, _, _, gpt, _ = tiny
    tok = gpt.tokenizer
    data = readouts.task_data(tok, dict(settings, seq_len=96), 0)   # the tiny vocabulary cuts words finely
    (ids, mask, _), (segs, _) = data["entailment"]["train"], data["entailment"]["segments"]
    assert segs.shape == ids.shape
    for row, seg, m in zip(ids, segs, mask):
        first_sep = list(row).index(tok.sep_id)
        assert (seg[:first_sep + 1] == 0).all() and (seg[first_sep + 1:int(m.sum())] == 1).all()
        assert (seg[int(m.sum()):] == 0).all()


def test_unknown_condition():
    with pytest.raises(ValueError, match="unknown condition"):
        exp.run_one("ELMo", 0, asdict(exp.CONFIG.quick()))


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path, capsys):
    from minilm.cli import main
    r = quick_run(exp.NAME, tmp_path)   # seed 0: the recorded numbers
    assert r["conditions"] == exp.CONDITIONS and r["seeds"] == [0, 1, 2]
    assert len(r["runs"]) == 3 * len(exp.CONDITIONS)
    for c in exp.CONDITIONS:
        for key in ("agreement", "entailment", "sentiment", "cloze"):
            assert all(0.0 <= v <= 1.0 for v in r["summary"][key][c]["values"])
    for c in (exp.GPT_FROZEN, exp.GPT_FT):
        assert all(math.isfinite(v) for v in r["summary"]["perplexity"][c]["values"])
    for c in (exp.BERT_FROZEN, exp.BERT_FT):
        assert all(v is None or math.isnan(v) for v in r["summary"]["perplexity"][c]["values"])  # none for BERT
    tokens = [v for c in exp.CONDITIONS[1:] for v in r["summary"]["tokens"][c]["values"]]
    assert (max(tokens) - min(tokens)) / max(tokens) <= 0.05
    assert (tmp_path / f"{exp.NAME}.png").exists() and (tmp_path / f"{exp.NAME}.md").exists()


def test_steps_trend_tool_runs_the_fine_tuned_rows_at_each_budget(tmp_path, monkeypatch):
    """tools/gpt_vs_bert_steps.py: each job is the experiment's own run_one at that many steps (the
    rest of the settings the experiment's defaults); the summary is the mean and spread over seeds
    per model and budget, in the budgets' order; the plot is written."""
    from tests.models.hf_fixture_tool import import_tool
    tool = import_tool("gpt_vs_bert_steps")
    seen = []

    def fake_run_one(condition, seed, settings):
        seen.append((condition, seed, settings["steps"], settings["ft_steps"]))
        base = 0.5 if condition == exp.BERT_FT else 0.9
        return {"entailment": base + seed / 100 + settings["steps"] / 1e4, "agreement": base, "cloze": base,
                "sentiment": 0.0}

    monkeypatch.setattr(exp, "run_one", fake_run_one)
    runs = [tool._one((n, seed, c)) for n in (1000, 250) for seed in (0, 2) for c in (exp.GPT_FT, exp.BERT_FT)]
    assert seen[0] == (exp.GPT_FT, 0, 1000, exp.CONFIG().ft_steps) and len(seen) == 8
    summary = tool.summarize(runs)
    assert list(summary[exp.BERT_FT]) == ["250", "1000"]
    mean, sd = summary[exp.BERT_FT]["1000"]["entailment"]
    assert mean == pytest.approx(0.61) and sd == pytest.approx(0.01)
    assert summary[exp.GPT_FT]["250"]["agreement"] == [pytest.approx(0.9), 0.0]
    tool.plot(summary, tmp_path / "trend.png")
    assert (tmp_path / "trend.png").stat().st_size > 1000
