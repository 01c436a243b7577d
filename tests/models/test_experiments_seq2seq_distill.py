"""The ``architectures`` (encoder–decoder vs prefix LM vs causal LM) and ``distillation`` (student
depth and objective) experiments: their helpers, fast; one quick run of each through the CLI, slow."""
import json
import math
from dataclasses import replace

import numpy as np
import pytest

from autograd.errors import ConfigError
from minilm.experiments import architectures, distillation
from tests.models.experiment_quick import quick_run
from minilm.recipes.config import override


# ---- architectures -------------------------------------------------------------------------------

def _decoder_only(arch, seed=0):
    cfg = architectures.DecoderOnlyConfig(vocab_size=20, n_embd=16, n_head=2, n_layer=2, n_inner=80, arch=arch)
    model = architectures.T5DecoderOnly(cfg, rng=np.random.default_rng(seed))
    model.eval()
    return model


def _changed_positions(model, ids, P, k):
    """Which positions' logits move when token k is replaced."""
    base = model(ids, P)["logits"].data
    other = ids.copy()
    other[0, k] = 15
    return (np.abs(model(other, P)["logits"].data - base).max(-1)[0] > 1e-6).tolist()


def test_prefix_lm_sees_the_whole_input_and_the_target_causally():
    model, ids, P = _decoder_only("prefixlm"), np.array([[3, 4, 5, 6, 7, 8, 9, 10]]), 4
    assert _changed_positions(model, ids, P, 1) == [True] * 8          # an input token: everyone
    assert _changed_positions(model, ids, P, 5) == [False] * 5 + [True] * 3  # a target token: only later


def test_causal_lm_reads_the_input_left_to_right():
    model, ids = _decoder_only("causal"), np.array([[3, 4, 5, 6, 7, 8, 9, 10]])
    assert _changed_positions(model, ids, 4, 1) == [False] + [True] * 7
    assert _changed_positions(model, ids, 4, 5) == [False] * 5 + [True] * 3


def test_decoder_only_ignores_padding_and_rejects_bad_prefix():
    model = _decoder_only("prefixlm")
    a = model(np.array([[3, 4, 5, 6]]), 2)["logits"].data
    b = model(np.array([[3, 4, 5, 6, 0, 0]]), 2)["logits"].data             # pad id 0 on the right
    np.testing.assert_allclose(a, b[:, :4], atol=1e-5)
    with pytest.raises(Exception, match="prefix_len"):
        model(np.array([[3, 4, 5]]), 4)
    with pytest.raises(ConfigError, match="arch"):
        architectures.T5DecoderOnly(architectures.DecoderOnlyConfig(vocab_size=20, arch="bidirectional"))


def test_greedy_generate_follows_the_argmax_of_forward():
    model = _decoder_only("prefixlm", seed=3)
    prefixes = [[3, 4, 5], [6, 7], [8, 9, 10]]
    out = model.generate(prefixes, 4)
    for p, gen in zip(prefixes, out):
        ids = list(p)
        for _ in range(4):
            ids.append(int(model(np.array([ids]), len(p))["logits"].data[0, -1].argmax()))
        assert gen == ids[len(p):]
    first = out[0][0]
    stopped = model.generate([prefixes[0]], 4, eos_id=first)[0]
    assert stopped == [first]                                                   # cut after EOS


def _block_masked(tool, n_layer=2, **variant):
    cfg = architectures.DecoderOnlyConfig(vocab_size=20, n_embd=16, n_head=2, n_layer=n_layer, n_inner=80,
                                          arch="prefixlm")
    model = tool.BlockMaskedDecoderOnly(cfg, rng=np.random.default_rng(0), **variant)
    model.eval()
    return model


def test_prefix_lm_masks_tool_changes_the_mask_of_the_blocks_named():
    """tools/prefix_lm_masks.py: unchanged it is the experiment's prefix LM, every block causal it is
    the causal LM (same weights), and a one-block stack shows which tokens each variant mixes."""
    from tests.models.hf_fixture_tool import import_tool
    tool = import_tool("prefix_lm_masks")
    ids = np.array([[3, 4, 5, 6, 7, 8, 9, 10]])
    np.testing.assert_allclose(_block_masked(tool)(ids, 4)["logits"].data,
                               _decoder_only("prefixlm")(ids, 4)["logits"].data, atol=1e-6)
    np.testing.assert_allclose(_block_masked(tool, causal="all")(ids, 4)["logits"].data,
                               _decoder_only("causal")(ids, 4)["logits"].data, atol=1e-6)
    assert _changed_positions(_block_masked(tool, 1), ids, 4, 2) == [True] * 8
    assert _changed_positions(_block_masked(tool, 1, causal=(0,)), ids, 4, 2) == [False] * 2 + [True] * 6
    assert _changed_positions(_block_masked(tool, 1, self_only=(0,)), ids, 4, 2) == \
        [False, False, True, False] + [True] * 4                              # the target still reads the input
    assert _block_masked(tool, causal="rest").causal == {1} and _block_masked(tool, causal="all").causal == {0, 1}
    pos = tool.sinusoids(5, 6)                                                  # (T, C): sin in 0:3, cos in 3:6
    assert pos.shape == (5, 6) and (pos[0] == [0, 0, 0, 1, 1, 1]).all()
    assert not np.allclose(_block_masked(tool, sin=True)(ids, 4)["logits"].data,
                           _block_masked(tool)(ids, 4)["logits"].data)


def test_prefix_lm_masks_tool_prints_a_row_per_variant(capsys):
    from tests.models.hf_fixture_tool import import_tool
    tool = import_tool("prefix_lm_masks")
    assert tool.main(["--quick", "--seeds", "0", "--variants", "prefix,self-first", "--steps", "3"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    assert [r.split()[0] for r in rows[2:4]] == ["prefix", "self-first"]
    assert all(0 <= float(x) <= 100 for r in rows[2:4] for x in r.split()[1:])
    with pytest.raises(SystemExit, match="unknown variant"):
        tool.main(["--quick", "--seeds", "0", "--variants", "bidirectional"])


def test_the_architectures_have_equal_parameters():
    settings = architectures.plan(replace(architectures.CONFIG.quick(), n_layer=2)).settings
    models = {c: architectures.make_model(c, settings, vocab_size=40, pad_id=0, eos_id=1, seed=0)
              for c in architectures.CONDITIONS}
    counts = {c: sum(p.size for p in m.parameters()) for c, m in models.items()}
    t5_blocks = [counts[c] for c in list(architectures.CONDITIONS)[:3]]
    assert max(t5_blocks) / min(t5_blocks) < 1.02, counts                      # up to a bias table, a norm
    assert max(counts.values()) / min(counts.values()) < 1.1, counts           # GPT blocks: + positions, biases
    prefix = models["prefix LM (2L)"]
    assert isinstance(prefix, architectures.T5DecoderOnly) and prefix.config.arch == "prefixlm"
    assert len(prefix.stack.blocks) == 4 and models["causal LM (2L)"].config.arch == "causal"
    assert len(models["encoder-decoder (L+L)"].encoder.blocks) == 2


def test_architectures_plan_sizes_and_overrides():
    quick, full = architectures.plan(architectures.CONFIG.quick()), architectures.plan(architectures.CONFIG())
    assert quick.conditions == full.conditions == list(architectures.CONDITIONS)
    assert [m.key for m in full.metrics][:2] == ["exact_match", "token_accuracy"]
    assert quick.settings["steps"] < full.settings["steps"]
    json.dumps(full.settings)
    s = architectures.plan(replace(architectures.CONFIG(), task="sort", steps=7)).settings
    assert (s["task"], s["steps"], s["n_layer"]) == ("sort", 7, full.settings["n_layer"])
    with pytest.raises(ConfigError, match="steps"):
        architectures.plan(replace(architectures.CONFIG(), steps=0))


def test_recipe_config_and_unknown_condition():
    from minilm.recipes import t5
    cfg = override(t5.T5RecipeConfig(), task="reverse", seed=4)      # how the experiment changes a recipe
    assert (cfg.task, cfg.seed, cfg.model.n_layer) == ("reverse", 4, 2)
    with pytest.raises(ConfigError, match="n_layers"):       # a misspelt option is an error, not ignored
        override(t5.T5RecipeConfig(), n_layers=3)
    with pytest.raises(ConfigError, match="unknown condition"):
        architectures.run_one("bert", 0, architectures.plan(architectures.CONFIG.quick()).settings)



def test_gpt_block_rows_train_at_their_own_rate(monkeypatch):
    """At the T5 rows' rate the GPT-block stacks stay at the unigram level: they get ``gpt_lr``."""
    import minilm.train as train_module
    seen = {}

    def fake_train(recipe, cfg, out, **kw):
        seen[type(recipe.model).__name__] = cfg.lr
        return {"metrics": {"exact_match": 0.0, "token_accuracy": 0.0, "loss": 1.0}, "parameters": 1}

    monkeypatch.setattr(train_module, "train", fake_train)
    settings = architectures.plan(replace(architectures.CONFIG.quick(), lr=5e-3, gpt_lr=2e-4)).settings
    architectures.run_one("causal LM (2L), GPT blocks", 0, settings)
    architectures.run_one("causal LM (2L)", 0, settings)
    assert seen == {"PrefixLM": 2e-4, "T5DecoderOnly": 5e-3}


def test_task_span_is_t5s_denoising_with_the_same_windows_for_every_architecture(tmp_path):
    """--task span: every row learns span corruption of the same text, with the same vocabulary and the
    same held-out windows (the comparison is fair only then), read on the spans' token accuracy; a
    --corpus without it is refused, since the toy tasks would leave the text unread."""
    text = tmp_path / "text.txt"
    text.write_text("\n\n".join(f"the zyzzyva {w} on the mat .\nthe dog {w} in the sun ." for w in
                                  ("sat", "slept", "ran", "lay", "stood", "sang") * 8), encoding="utf-8")
    cfg = replace(architectures.CONFIG.quick(), task="span", corpus=str(text), steps=3, warmup=1)
    p = architectures.plan(cfg)
    assert [m.key for m in p.metrics] == ["token_accuracy", "loss", "parameters"]
    assert {c.metric for c in p.claims} == {"token_accuracy"} and not any(c.why_not for c in p.claims)
    assert "span corruption of " + str(text) in p.title
    recipes = {c: architectures.build_recipe(c, 0, p.settings) for c in architectures.CONDITIONS}
    held_out = {c: [(list(a), list(b)) for a, b in r.data.val] for c, r in recipes.items()}
    first = held_out["encoder-decoder (L+L)"]
    assert all(v == first for v in held_out.values())
    tok = recipes["encoder-decoder (L+L)"].tokenizer                              # the file's words, not the
    assert tok.decode(tok.encode("zyzzyva")) == "zyzzyva"                          # synthetic corpus's
    vocab = {c: r.tokenizer.vocab_size for c, r in recipes.items()}
    assert len(set(vocab.values())) == 1, vocab
    out = architectures.run_one("prefix LM (2L)", 0, p.settings)
    assert math.isnan(out["exact_match"]) and 0 <= out["token_accuracy"] <= 1 and math.isfinite(out["loss"])
    with pytest.raises(ConfigError, match="Add --task span"):
        architectures.plan(replace(architectures.CONFIG.quick(), corpus=str(text)))


# ---- distillation --------------------------------------------------------------------------------

def test_objectives_map_onto_distill_weights():
    w = distillation.weights_for("hard", 2.0)
    assert (w.hard, w.soft, w.cos, w.hidden_mse, w.attention) == (1.0, 0.0, 0.0, 0.0, 0.0)
    w = distillation.weights_for("cosine", 3.0)
    assert (w.hard, w.soft, w.cos, w.temperature) == (0.5, 0.5, 1.0, 3.0)
    w = distillation.weights_for("tinybert", 2.0)
    assert w.hidden_mse > 0 and w.attention > 0 and w.cos == 0
    with pytest.raises(ConfigError, match="objective"):
        distillation.weights_for("dark-knowledge", 2.0)


def test_encode_pairs_is_cls_premise_sep_hypothesis_sep():
    from minilm.data import entailment_dataset
    from minilm.tokenizers import WordPieceTokenizer
    ex = entailment_dataset(8, rng=np.random.default_rng(0))
    tok = WordPieceTokenizer.train([t for e in ex for t in (e.premise, e.hypothesis)], 80)
    ids, mask = distillation.encode_pairs(tok, ex, 64)
    first = tok.encode(ex[0].premise)
    n = int(mask[0].sum())
    assert ids[0, 0] == tok.cls_id and ids[0, 1 + len(first)] == tok.sep_id and ids[0, n - 1] == tok.sep_id
    assert list(ids[0, 1:1 + len(first)]) == first and (ids[0, n:] == tok.pad_id).all()
    ids8, _ = distillation.encode_pairs(tok, ex, 8)
    assert ids8.shape == (8, 8)


def test_distillation_plan_and_unknown_condition():
    quick, full = distillation.plan(distillation.CONFIG.quick()), distillation.plan(distillation.CONFIG())
    assert full.conditions[0] == "teacher (4 layers)" and len(full.conditions) == len(distillation.CONDITIONS)
    assert quick.conditions[0] == f"teacher ({quick.settings['teacher_layers']} layers)"
    assert all(distillation.CONDITIONS[c][0] < quick.settings["teacher_layers"] for c in quick.conditions[1:])
    assert [m.key for m in full.metrics][:2] == ["retained", "accuracy"]
    json.dumps(full.settings)
    s = distillation.plan(replace(distillation.CONFIG(), n_train=50, temperature=4.0)).settings
    assert (s["n_train"], s["student_steps"], s["temperature"]) == (50, full.settings["student_steps"], 4.0)
    with pytest.raises(ConfigError, match="unknown condition"):
        distillation.run_one("3 layers: magic", 0, full.settings)


def test_make_student_copies_spread_teacher_layers():
    from minilm.models.bert import BertConfig
    from minilm.models.bert_heads import BertForSequenceClassification
    config = BertConfig(vocab_size=30, max_position_embeddings=16, n_layer=4, n_head=2, n_embd=16)
    teacher = BertForSequenceClassification(config, 3, rng=np.random.default_rng(0))
    student = distillation.make_student({"teacher": teacher}, 2, "tinybert", seed=0)
    assert len(student.bert.encoder.layer) == 2 and student.classifier.weight.shape == (3, 16)
    spread = (teacher.bert.encoder.layer[0], teacher.bert.encoder.layer[3])   # default_layer_map(4, 2)
    for s_layer, t_layer in zip(student.bert.encoder.layer, spread):
        np.testing.assert_array_equal(s_layer.attn.q_proj.weight.data, t_layer.attn.q_proj.weight.data)
    np.testing.assert_array_equal(student.classifier.weight.data, teacher.classifier.weight.data)
    assert hasattr(student, "fit_dense")                                       # W_h for the hidden MSE
    assert not hasattr(distillation.make_student({"teacher": teacher}, 1, "soft", seed=0), "fit_dense")


# ---- the experiments end to end (slow) -----------------------------------------------------------

def _run_quick(name, tmp_path, capsys):
    from minilm.cli import main
    result = quick_run(name, tmp_path)   # seed 0: the recorded numbers
    assert (tmp_path / f"{name}.png").read_bytes()[:4] == b"\x89PNG" and (tmp_path / f"{name}.md").exists()
    assert len(result["runs"]) == 3 * len(result["conditions"])
    for metric in result["metrics"]:
        for c in result["conditions"]:
            values = result["summary"][metric][c]["values"]
            assert len(values) == 3 and all(math.isfinite(v) for v in values), (metric, c, values)
    return result


@pytest.mark.slow
def test_architectures_quick_through_the_cli(tmp_path, capsys):
    r = _run_quick("architectures", tmp_path, capsys)
    s = r["summary"]
    params = [s["parameters"][c]["mean"] for c in r["conditions"]]
    assert max(params[:3]) / min(params[:3]) < 1.02 and max(params) / min(params) < 1.1  # equal parameters
    for c in r["conditions"]:                                                   # learnt something: above
        assert s["token_accuracy"][c]["mean"] > 0.15                           # guessing 1 of 11 (letters, EOS)
        assert 0 <= s["exact_match"][c]["mean"] <= 1


@pytest.mark.slow
def test_distillation_quick_through_the_cli(tmp_path, capsys):
    r = _run_quick("distillation", tmp_path, capsys)
    s, teacher = r["summary"], r["conditions"][0]
    assert s["retained"][teacher]["values"] == [1.0] * 3 and s["size"][teacher]["mean"] == 1.0
    for c in r["conditions"][1:]:
        assert 0 < s["size"][c]["mean"] < 1                                    # the students are smaller
        for a, t, ret in zip(s["accuracy"][c]["values"], s["accuracy"][teacher]["values"], s["retained"][c]["values"]):
            assert ret == pytest.approx(a / t)                                 # retained = student / teacher


def test_distillation_reads_the_real_corpus_when_asked():
    """--corpus reaches the teacher's settings (and its cache key) and the page says which text it read."""
    from minilm.cli import build_parser
    from minilm.experiments import settings_of
    from minilm.recipes.config import from_args
    args = build_parser().parse_args(["experiment", "distillation", "--corpus", "real"])
    cfg = from_args(distillation.CONFIG, args, base=distillation.CONFIG())
    assert cfg.corpus == "real" and settings_of(cfg)["corpus"] == "real"
    assert "the documents of --corpus real" in distillation.plan(cfg).notes[0]
    assert "200 synthetic documents" in distillation.plan(distillation.CONFIG()).notes[0]


def test_distil_at_pretraining_tool_runs_each_student_and_fine_tunes_it(capsys):
    """tools/distil_at_pretraining.py: DistilBERT's setting (distil the pre-trained teacher, then
    fine-tune); its batches are the teacher's masked pre-training pairs; one --quick seed, one row."""
    from tests.models.hf_fixture_tool import import_tool
    tool = import_tool("distil_at_pretraining")
    assert list(tool.STUDENTS) == ["no distillation", "MLM + cos", "soft + MLM + cos"]
    assert tool.STUDENTS["MLM + cos"]["soft"] == 0 and tool.STUDENTS["soft + MLM + cos"]["soft"] > 0
    from minilm.experiments import settings_of
    s = settings_of(distillation.CONFIG.quick())
    teacher, tok, data, batch = tool.pretrained_teacher(0, s, steps=2)
    b = batch(np.random.default_rng(0))
    masked = b["mlm_labels"] != -100
    assert masked.any() and (b["input_ids"][masked] == tok.mask_id).any() and not teacher.training
    assert len(data["y"]) == s["n_train"] and len(data["y_test"]) == s["n_test"]
    assert tool.main(["--quick", "--seeds", "0"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    assert rows[0].split()[0] == "seed" and rows[1].split()[0] == "0" and rows[2].split()[0] == "mean"
    assert all(0 <= float(x) <= 100 for x in rows[1].split()[1:]) and len(rows[1].split()) == 5
