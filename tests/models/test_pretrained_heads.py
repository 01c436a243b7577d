"""The MLM and replaced-token heads compute what transformers 5.24 computes, for every activation the
loaders accept (issue 24), and export writes the head's activation back or refuses the model.

transformers' heads: BERT's ``BertPredictionHeadTransform`` and DeBERTa's heads follow ``hidden_act``,
DistilBERT's ``vocab_transform`` ``activation``, ELECTRA's discriminator head ``hidden_act``; RoBERTa's
``RobertaLMHead`` and ELECTRA's ``ElectraGeneratorPredictions`` always use the exact GELU. The loaders
set ``head_activation`` accordingly (``minilm/pretrained/{bert,encoders}.py``). The fixtures
(tests/data/hf/*-relu, *-gelu-new*, written by tools/make_hf_fixtures_heads.py) are tiny random
models whose two rules differ; the default suite reads them without PyTorch. Measured before the
fix (minilm's heads took the GELU form from the encoder and never relu): bert-relu 0.47,
distilbert-relu 0.47, electra-discriminator-relu 0.028, roberta-gelu-new 2.3e-4, and the generator
with intermediate_size 24 ≠ 4 x 16 was refused.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from autograd.errors import CheckpointError, ConfigError
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForPreTraining
from minilm.models.electra import Electra, ElectraConfig
from minilm.models.roberta import RobertaConfig, RobertaForMaskedLM
from minilm.pretrained import export, hf_logits, load_pretrained
from tests.models.hf_fixture_tool import import_tool

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hf"
HEADS = {  # fixture → (encoder activation, head activation) that minilm must end up with
    "bert-relu": ("relu", "relu"),
    "distilbert-relu": ("relu", "relu"),
    "electra-discriminator-relu": ("relu", "relu"),
    "roberta-gelu-new": ("gelu", "gelu_exact"),
    "electra-generator-gelu-new-inner": ("gelu", "gelu_exact"),
}
HAS_TRANSFORMERS = all(importlib.util.find_spec(m) is not None for m in ("transformers", "torch"))


def expected(name: str) -> dict:
    with np.load(DATA / name / "expected.npz", allow_pickle=False) as f:
        return dict(f)


def head_of(model) -> tuple[str, str]:
    """(encoder activation, the activation the head runs) of a loaded model."""
    c = model.config
    return c.activation, c.head_activation or c.activation


@pytest.mark.parametrize("name", HEADS)
def test_head_logits_equal_transformers(name):
    model, _ = load_pretrained(DATA / name)
    e = expected(name)
    diff = float(np.abs(hf_logits(model, e["input_ids"], e["attention_mask"]) - e["logits"]).max())
    assert diff < 1e-5, (f"{name}: minilm's logits differ from transformers' by {diff:.2e}: does the head use "
                         f"the activation transformers' head uses ({HEADS[name][1]!r})?")
    assert head_of(model) == HEADS[name], f"{name}: (encoder, head) activations {head_of(model)}, expected {HEADS[name]}"


def test_an_electra_generator_of_any_inner_size():
    model, _ = load_pretrained(DATA / "electra-generator-gelu-new-inner")
    assert model.config.generator_inner == 24
    assert model.encoder.layer[0].mlp.fc1.weight.shape == (24, 16)


@pytest.mark.parametrize("name", HEADS)
def test_export_writes_the_head_back(tmp_path, name):
    """load → export → load: the same logits, and a config.json that says what the head computes."""
    model, tok = load_pretrained(DATA / name)
    folder = export(model, tmp_path / name, tokenizer=tok)
    written = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    stored = json.loads((DATA / name / "config.json").read_text(encoding="utf-8"))
    for key in ("hidden_act", "activation", "intermediate_size"):
        assert written.get(key) == stored.get(key), f"{name}: export wrote {key}={written.get(key)!r}"
    back, _ = load_pretrained(folder)
    e = expected(name)
    np.testing.assert_allclose(hf_logits(back, e["input_ids"], e["attention_mask"]), e["logits"], atol=1e-5)


def test_the_configs_check_the_head_activation():
    for make in (lambda a: BertConfig(vocab_size=10, head_activation=a),
                 lambda a: ElectraConfig(vocab_size=10, head_activation=a)):
        assert make(None) and make("relu") and make("gelu_exact")
        with pytest.raises(ConfigError, match=r"head_activation='tanh'.*'gelu', 'gelu_exact', 'relu'"):
            make("tanh")
    assert ElectraConfig(vocab_size=10).bert_config("generator").n_inner == 4 * 16   # today's default: 4·G
    assert ElectraConfig(vocab_size=10, generator_inner=24).bert_config("generator").n_inner == 24
    with pytest.raises(ConfigError, match="generator_inner=0"):
        ElectraConfig(vocab_size=10, generator_inner=0)


def _moved(model):
    rng = np.random.default_rng(5)
    for p in model.parameters():
        p.data += rng.normal(0, 0.05, p.shape).astype(p.data.dtype)
    return model.eval()


def test_export_refuses_a_head_transformers_cannot_compute(tmp_path):
    """RoBERTa's and the ELECTRA generator's heads are exact GELU in transformers whatever hidden_act
    says; BERT's and DistilBERT's follow hidden_act / activation (ELECTRA's replaced-token head always
    runs the encoders' activation in minilm, so it cannot differ)."""
    rng = np.random.default_rng(0)
    small = dict(vocab_size=40, n_embd=16, n_head=2, n_layer=1, max_position_embeddings=12)
    refused = {
        "RobertaLMHead": RobertaForMaskedLM(RobertaConfig(**small, pad_token_id=1), rng=rng),   # tanh head
        "BertPredictionHeadTransform": BertForPreTraining(BertConfig(**small, head_activation="relu"), rng=rng),
        "vocab_transform": RobertaForMaskedLM(RobertaConfig(**small, layer_norm_eps=1e-12, activation="gelu_exact",
                                                            head_activation="relu"), rng=rng),
        "ElectraGeneratorPredictions": Electra(ElectraConfig(**small), rng=rng),                  # tanh head
    }
    for head, model in refused.items():
        with pytest.raises(ConfigError, match=rf"head_activation.*{head}"):
            export(model, tmp_path / head)
    ok = RobertaForMaskedLM(RobertaConfig(**small, pad_token_id=1, head_activation="gelu_exact"), rng=rng)
    assert json.loads((export(ok, tmp_path / "ok") / "config.json").read_text())["hidden_act"] == "gelu_new"
    both = export(Electra(ElectraConfig(**small, head_activation="gelu_exact"), rng=rng), tmp_path / "electra")
    for part in ("discriminator", "generator"):     # the replaced-token head follows hidden_act: tanh is fine
        assert json.loads((both / part / "config.json").read_text())["hidden_act"] == "gelu_new"


@pytest.mark.parametrize("name, key", [("bert", "hidden_act"), ("roberta", "hidden_act"), ("distilbert", "activation"),
                                       ("electra-discriminator", "hidden_act"), ("electra-generator", "hidden_act"),
                                       ("deberta-v2", "hidden_act")])
def test_an_activation_a_family_lacks_is_refused_by_name(tmp_path, name, key):
    folder = tmp_path / name
    shutil.copytree(DATA / name, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config[key] = "silu"
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(CheckpointError, match=rf"{key}.*'silu'.*gelu"):
        load_pretrained(folder)


# ---- with transformers (skipped without it) -------------------------------------------------------
def _tool():
    return import_tool("make_hf_fixtures_heads")


@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="re-deriving the fixtures needs torch and transformers")
@pytest.mark.parametrize("name", HEADS)
def test_the_fixtures_are_what_transformers_computes(tmp_path, name):
    import transformers as tf
    tool = _tool()
    assert tool.check_head(name, DATA) <= 1e-5, f"{name}: transformers' logits changed"
    model, _ = load_pretrained(DATA / name)          # and the exported folder, read by the fixture's class
    folder = export(model, tmp_path / name)
    cls = getattr(tf, json.loads((DATA / name / "config.json").read_text())["architectures"][0])
    e = expected(name)
    diff = float(np.abs(tool._logits(cls.from_pretrained(folder).eval(), e) - e["logits"]).max())
    assert diff < 1e-5, f"{name}: transformers reads minilm's export with logits {diff:.2e} away"


@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="comparing with transformers needs torch and transformers")
@pytest.mark.parametrize("act", ["gelu_new", "gelu"])
def test_deberta_heads_follow_hidden_act(tmp_path, act):
    """DeBERTa's heads (``DebertaLMPredictionHead``, v2's ``lm_predictions``) use ``hidden_act``, as
    minilm's head follows ``activation``; checked on both stored DeBERTa layouts."""
    import transformers as tf
    for name in ("deberta", "deberta-v2"):
        folder = tmp_path / name
        shutil.copytree(DATA / name, folder)
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        (folder / "config.json").write_text(json.dumps({**config, "hidden_act": act}), encoding="utf-8")
        e = expected(name)
        theirs = _tool()._logits(getattr(tf, config["architectures"][0]).from_pretrained(folder).eval(), e)
        model, _ = load_pretrained(folder)
        diff = float(np.abs(hf_logits(model, e["input_ids"], e["attention_mask"]) - theirs).max())
        assert diff < 1e-5, f"{name} with hidden_act {act!r}: {diff:.2e}"
