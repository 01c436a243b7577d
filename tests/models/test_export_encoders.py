"""minilm's RoBERTa, DistilBERT-like encoder and ELECTRA → ``export`` → Hugging Face folders
(minilm/pretrained/export_encoders.py): ``load_pretrained`` reads them back with the same logits
(no transformers needed), and transformers' classes give the same logits (skipped without it)."""
from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from autograd.errors import ConfigError
from minilm.models.electra import Electra, ElectraConfig
from minilm.models.roberta import RobertaConfig, RobertaForMaskedLM
from minilm.pretrained import export, hf_logits, load_pretrained

ROOT = Path(__file__).resolve().parents[2]
HF = ROOT / "tests" / "data" / "hf"
IDS = np.array([[5, 6, 7, 8, 9, 10, 11], [12, 13, 14, 1, 1, 1, 1]])   # 1: the pad id of these models
MASK = (IDS != 1).astype(np.int64)
REAL = MASK.astype(bool)
HAS_TRANSFORMERS = all(importlib.util.find_spec(m) is not None for m in ("transformers", "torch"))


def _moved(model, seed: int):
    """Every weight off its init (so a wrong name or a missing transpose shows)."""
    rng = np.random.default_rng(seed)
    for p in model.parameters():
        p.data += rng.normal(0, 0.05, p.shape).astype(p.data.dtype)
    return model.eval()


def roberta(activation="gelu", head_activation="gelu_exact", **kw):
    """transformers' RobertaLMHead is the exact GELU whatever hidden_act says (else export refuses)."""
    config = RobertaConfig(vocab_size=40, n_embd=16, n_head=2, n_layer=2, max_position_embeddings=12,
                           pad_token_id=1, activation=activation, head_activation=head_activation, **kw)
    return _moved(RobertaForMaskedLM(config, rng=np.random.default_rng(0)), 1)


def electra(activation="gelu"):
    """The generator's MLM head exact, as transformers' ElectraGeneratorPredictions (else export refuses)."""
    config = ElectraConfig(vocab_size=40, n_embd=16, n_head=2, n_layer=2, embedding_size=8, activation=activation,
                           head_activation="gelu_exact", max_position_embeddings=12)
    return _moved(Electra(config, rng=np.random.default_rng(0)), 2)


def test_roberta_round_trip_and_the_position_rows(tmp_path):
    """A minilm RoBERTa reads position row t; the export puts pad + 1 rows in front so that
    transformers' row padding_idx + 1 + t is that row. Real tokens: equal logits; pads read another row."""
    model = roberta()
    before = hf_logits(model, IDS, MASK)
    folder = export(model, tmp_path / "roberta")
    config = json.loads((folder / "config.json").read_text())
    assert (config["architectures"], config["pad_token_id"], config["max_position_embeddings"]) == (
        ["RobertaForMaskedLM"], 1, 12 + 2)
    back, _ = load_pretrained(folder)
    assert back.config.position_offset == 2
    after = hf_logits(back, IDS, MASK)
    np.testing.assert_allclose(after[REAL], before[REAL], atol=1e-5)
    again, _ = load_pretrained(export(back, tmp_path / "again"))          # offset 2 already: written as is
    np.testing.assert_allclose(hf_logits(again, IDS, MASK), after, atol=1e-6)


def test_distilbert_like_round_trip_folds_the_segment_row(tmp_path):
    model = roberta("gelu_exact", None, layer_norm_eps=1e-12)
    before = hf_logits(model, IDS, MASK)
    folder = export(model, tmp_path / "distil")
    assert json.loads((folder / "config.json").read_text())["model_type"] == "distilbert"
    back, _ = load_pretrained(folder)
    np.testing.assert_allclose(hf_logits(back, IDS, MASK), before, atol=1e-5)   # pads too: positions from 0
    with pytest.raises(ConfigError, match="'gelu' \\(exact\\) or 'relu'"):
        export(roberta("gelu", None, layer_norm_eps=1e-12), tmp_path / "tanh")


@pytest.mark.parametrize("activation", ["gelu", "gelu_exact"])
def test_electra_exports_both_networks(tmp_path, activation):
    model = electra(activation)
    folder = export(model, tmp_path / "electra")
    assert sorted(p.name for p in folder.iterdir()) == ["discriminator", "generator"]
    for part, arch in (("discriminator", "ElectraForPreTraining"), ("generator", "ElectraForMaskedLM")):
        net = getattr(model, part)
        assert json.loads((folder / part / "config.json").read_text())["architectures"] == [arch]
        back, _ = load_pretrained(folder / part)
        assert type(back) is type(net)
        np.testing.assert_allclose(hf_logits(back, IDS, MASK), hf_logits(net, IDS, MASK), atol=1e-5)


def test_electra_ablation_discriminators_are_refused(tmp_path):
    config = ElectraConfig(vocab_size=40, n_embd=16, n_head=2, n_layer=1, objective="replace_mlm")
    with pytest.raises(ConfigError, match="replace_mlm"):
        export(Electra(config, rng=np.random.default_rng(0)).discriminator, tmp_path / "d")


@pytest.mark.parametrize("name", ["roberta", "distilbert", "electra-discriminator", "electra-generator"])
def test_loaded_checkpoints_export_unchanged(tmp_path, name):
    """transformers folder → load_pretrained → export → load_pretrained: the fixture's logits still
    (padding included)."""
    with np.load(HF / name / "expected.npz", allow_pickle=False) as f:
        e = dict(f)
    model, tok = load_pretrained(HF / name)
    back, tok_back = load_pretrained(export(model, tmp_path / name, tokenizer=tok))
    np.testing.assert_allclose(hf_logits(back, e["input_ids"], e["attention_mask"]), e["logits"], atol=1e-4)
    stored = json.loads((HF / name / "tokens.json").read_text(encoding="utf-8"))
    for text, ids in zip(stored["texts"], stored["input_ids"]):     # the tokenizer.json written back
        assert tok_back.encode(text, add_special_tokens=True) == ids == tok.encode(text, add_special_tokens=True)


def test_export_command_picks_the_family(tmp_path, capsys):
    from minilm.checkpoint import model_meta, save_checkpoint
    from minilm.commands.export import run
    for name, model in (("roberta", roberta()), ("electra", electra())):
        ckpt = save_checkpoint(tmp_path / f"{name}.npz", model=model, meta=model_meta(model, model.config))
        assert run(argparse.Namespace(checkpoint=str(ckpt), out_dir=str(tmp_path / name), json=True)) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["files"] == (["config.json", "model.safetensors"] if name == "roberta"
                                else ["discriminator", "generator"])


@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="comparing with transformers needs torch and transformers")
@pytest.mark.parametrize("activation", ["gelu_exact", "gelu"])
def test_transformers_gives_the_same_logits(tmp_path, activation):
    """Every exported model gives transformers' logits within 1e-5, with the tanh GELU too: RoBERTa's LM
    head and ELECTRA's generator head are the exact GELU in transformers, so these models have
    head_activation="gelu_exact" (export refuses any other: tests/models/test_pretrained_heads.py)."""
    import torch
    import transformers as tf
    cases = [("roberta", roberta(activation), tf.AutoModelForMaskedLM)]
    if activation == "gelu_exact":
        cases.append(("distil", roberta(activation, None, layer_norm_eps=1e-12), tf.AutoModelForMaskedLM))
    both = electra(activation)
    cases += [("disc", both.discriminator, tf.ElectraForPreTraining), ("gen", both.generator, tf.ElectraForMaskedLM)]
    for name, model, cls in cases:
        theirs = cls.from_pretrained(export(model, tmp_path / name)).eval()
        with torch.no_grad():
            out = theirs(input_ids=torch.tensor(IDS), attention_mask=torch.tensor(MASK)).logits.numpy()
        np.testing.assert_allclose(out[REAL], hf_logits(model, IDS, MASK)[REAL], atol=1e-5,
                                   err_msg=f"{name}: transformers' {cls.__name__} gives other logits")
