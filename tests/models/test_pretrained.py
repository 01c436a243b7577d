"""Hugging Face checkpoints: parity of all-MiniLM-L6-v2 with transformers (golden file made by
tools/make_pretrained_golden.py), export → load round trips, the embed CLI, and bad folders."""
import argparse
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from autograd import no_grad
from autograd.errors import CheckpointError, ConfigError
from minilm.models.bert import BertConfig, BertModel
from minilm.models.bert_heads import BertForPreTraining
from minilm.models.gpt import GPT, GPTConfig
from minilm.pretrained import export, load_bert, load_gpt2
from minilm.pretrained.safetensors_file import read_safetensors, write_safetensors

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "minilm_l6_golden.npz"

from tests.helpers import MINILM_L6_DIR as MODEL_DIR, needs_minilm_l6 as needs_model


# ---- parity with transformers on the real model -----------------------------------------------
@pytest.fixture(scope="module")
def minilm_l6():
    return load_bert(MODEL_DIR)


@pytest.fixture(scope="module")
def golden():
    with np.load(GOLDEN, allow_pickle=False) as z:
        g = {k: z[k] for k in z.files}
    g["texts"] = json.loads(g["texts"].tobytes().decode("utf-8"))
    return g


@pytest.fixture(scope="module")
def ours(minilm_l6, golden):
    """Our outputs on the golden texts, in padded batches of mixed lengths (the truncated long
    text alone, so the others are not padded to 256): ids, [CLS] states, sentence embeddings."""
    from minilm.pretrained import l2_normalize, mean_pool
    texts = golden["texts"]
    long = [i for i, n in enumerate(golden["lengths"]) if n == 256]
    rest = [i for i in range(len(texts)) if i not in long]
    out = {"ids": {}, "cls": {}, "emb": {}, "layers": None}
    for batch in [rest[:4], rest[4:12], rest[12:], long]:
        enc = minilm_l6.encode([texts[i] for i in batch])
        emb = l2_normalize(mean_pool(enc["last_hidden_state"], enc["attention_mask"]))
        for j, i in enumerate(batch):
            out["ids"][i] = enc["input_ids"][j][enc["attention_mask"][j] == 1].tolist()
            out["cls"][i], out["emb"][i] = enc["last_hidden_state"][j, 0], emb[j]
        if out["layers"] is None:
            out["layers"] = np.stack([h[:, 0] for h in enc["hidden_states"]])  # (L+1, 4, C)
    assert rest[:4] == [0, 1, 2, 3]
    out["ids"] = [out["ids"][i] for i in range(len(texts))]
    out["cls"] = np.stack([out["cls"][i] for i in range(len(texts))])
    out["emb"] = np.stack([out["emb"][i] for i in range(len(texts))])
    return out


@needs_model
def test_golden_texts_are_varied(golden):
    texts = golden["texts"]
    assert len(texts) >= 20 and "" in texts and max(golden["lengths"]) == 256  # one text truncated
    assert any("é" in t for t in texts) and any("東" in t for t in texts)


@needs_model
def test_token_ids_match_transformers_exactly(ours, golden):
    for i, (text, n) in enumerate(zip(golden["texts"], golden["lengths"])):
        assert ours["ids"][i] == golden["input_ids"][i, :n].tolist(), text


@needs_model
def test_hidden_states_match_transformers(ours, golden, minilm_l6):
    assert ours["layers"].shape == golden["cls_layers"].shape == (7, 4, 384)  # L + 1 states
    np.testing.assert_allclose(ours["layers"], golden["cls_layers"], atol=1e-4, rtol=0)
    np.testing.assert_allclose(ours["cls"], golden["cls_last"], atol=1e-4, rtol=0)


@needs_model
def test_sentence_embeddings_match_sentence_transformers(ours, golden):
    assert ours["emb"].dtype == np.float32
    np.testing.assert_allclose(ours["emb"], golden["embeddings"], atol=1e-4, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(ours["emb"], axis=1), 1.0, atol=1e-5)


@needs_model
def test_embed_matches_the_golden_embeddings(minilm_l6, golden):
    texts = golden["texts"][:12]
    tokens, emb = minilm_l6.embed(texts, batch_size=5)       # batches of 5, 5 and 2
    assert [len(t) for t in tokens] == golden["lengths"][:12].tolist()
    np.testing.assert_allclose(emb, golden["embeddings"][:12], atol=1e-4, rtol=0)


@needs_model
def test_padding_does_not_change_embeddings(minilm_l6):
    texts = ["a short one", "a much longer sentence with many more tokens in it than the first"]
    _, together = minilm_l6.embed(texts)
    _, alone = minilm_l6.embed(texts[:1])
    np.testing.assert_allclose(together[0], alone[0], atol=1e-5)


@needs_model
def test_loaded_config_uses_exact_gelu_and_bert_eps(minilm_l6):
    cfg = minilm_l6.config
    assert (cfg.n_layer, cfg.n_embd, cfg.n_head, cfg.activation) == (6, 384, 12, "gelu_exact")
    assert cfg.layer_norm_eps == 1e-12 and minilm_l6.max_seq_length == 256 and minilm_l6.missing == []
    assert minilm_l6.tokenizer.do_lower_case


@needs_model
def test_embed_cli_json(capsys):
    from minilm.cli import build_parser
    from minilm.commands.embed import run
    parser = build_parser()
    args = parser.parse_args(["embed", str(MODEL_DIR), "Hello World!", "", "--json"])
    assert run(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"tokens", "embeddings"}
    assert out["tokens"] == [["[CLS]", "hello", "world", "!", "[SEP]"], ["[CLS]", "[SEP]"]]
    assert np.array(out["embeddings"]).shape == (2, 384)
    args = parser.parse_args(["embed", str(MODEL_DIR), "one", "two"])
    assert run(args) == 0 and "cosine similarity" in capsys.readouterr().out
    args = parser.parse_args(["embed", str(MODEL_DIR), "one", "--batch-size", "0"])
    with pytest.raises(ConfigError, match="batch-size"):
        run(args)


# ---- export → load round trips (small random models, no package needed) -----------------------
def _gpt():
    model = GPT(GPTConfig(vocab_size=40, block_size=16, n_layer=2, n_head=2, n_embd=16),
                rng=np.random.default_rng(1))
    return model.eval()


def test_gpt_round_trip_identical_logits(tmp_path):
    model = _gpt()
    export(model, tmp_path / "gpt2")
    arrays, meta = read_safetensors(tmp_path / "gpt2" / "model.safetensors")
    assert meta == {"format": "pt"} and "lm_head.weight" not in arrays
    assert arrays["transformer.h.0.attn.c_attn.weight"].shape == (16, 48)   # Conv1D: (C_in, 3C)
    assert arrays["transformer.h.0.mlp.c_fc.weight"].shape == (16, 64)
    np.testing.assert_array_equal(arrays["transformer.h.1.mlp.c_proj.weight"],
                                  model.state_dict()["blocks.1.mlp.fc2.weight"].T)
    config = json.loads((tmp_path / "gpt2" / "config.json").read_text())
    assert config["architectures"] == ["GPT2LMHeadModel"] and config["activation_function"] == "gelu_new"
    assert config["bos_token_id"] is None and config["eos_token_id"] is None  # not GPT-2's 50256
    back = load_gpt2(tmp_path / "gpt2")
    ids = np.random.default_rng(2).integers(0, 40, size=(3, 16))
    with no_grad():
        np.testing.assert_array_equal(back(ids)[0].data, model(ids)[0].data)


def test_gpt2_config_takes_the_tokenizers_special_ids():
    from types import SimpleNamespace
    from minilm.pretrained.gpt2 import gpt_config_to_hf
    config = gpt_config_to_hf(_gpt().config, SimpleNamespace(bos_id=1, eos_id=2))
    assert (config["bos_token_id"], config["eos_token_id"]) == (1, 2)


def test_gpt2_model_layout_without_prefix_and_with_mask_buffers(tmp_path):
    model = _gpt()
    export(model, tmp_path / "a")
    arrays, _ = read_safetensors(tmp_path / "a" / "model.safetensors")
    arrays = {k.removeprefix("transformer."): v for k, v in arrays.items()}
    arrays["h.0.attn.bias"] = np.tril(np.ones((1, 1, 16, 16), np.float32))  # old files hold the causal mask
    arrays["lm_head.weight"] = arrays["wte.weight"]
    write_safetensors(tmp_path / "a" / "model.safetensors", arrays)
    back = load_gpt2(tmp_path / "a")
    ids = np.arange(8)[None]
    with no_grad():
        np.testing.assert_array_equal(back(ids)[0].data, model(ids)[0].data)


@pytest.mark.parametrize("cls", [BertModel, BertForPreTraining])
def test_bert_round_trip(tmp_path, cls):
    model = cls(BertConfig(vocab_size=30, n_layer=2, n_embd=16, n_head=2, dropout=0.0),
                rng=np.random.default_rng(3)).eval()
    export(model, tmp_path / "bert")
    arrays, _ = read_safetensors(tmp_path / "bert" / "model.safetensors")
    prefix = "bert." if cls is BertForPreTraining else ""
    assert prefix + "encoder.layer.1.attention.self.query.weight" in arrays
    assert "cls.predictions.decoder.weight" not in arrays  # tied: not written
    config = json.loads((tmp_path / "bert" / "config.json").read_text())
    assert config["hidden_act"] == "gelu_new"  # minilm's tanh GELU, in transformers' name
    back = load_bert(tmp_path / "bert")
    assert type(back.model) is cls and back.tokenizer is None and back.missing == []
    ids = np.random.default_rng(4).integers(0, 30, size=(2, 9))
    mask = np.ones((2, 9), dtype=np.int64)
    mask[1, 5:] = 0
    with no_grad():
        a, b = model(ids, None, mask), back.model(ids, None, mask)
    for key in ("last_hidden_state", "pooler_output") + (("mlm_logits",) if cls is BertForPreTraining else ()):
        np.testing.assert_array_equal(a[key].data, b[key].data)


def test_export_refuses_other_models(tmp_path):
    from autograd import nn
    with pytest.raises(ConfigError, match="cannot be exported"):
        export(nn.Linear(2, 2, rng=np.random.default_rng(0)), tmp_path / "x")


def test_export_command_writes_a_loadable_folder(tmp_path, capsys):
    from minilm.checkpoint import model_meta, save_checkpoint
    from minilm.commands.export import run
    model = _gpt()
    ckpt = save_checkpoint(tmp_path / "c.npz", model=model, meta=model_meta(model, model.config))
    assert run(argparse.Namespace(checkpoint=str(ckpt), out_dir=str(tmp_path / "hf"), json=True)) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model_class"] == "GPT" and "model.safetensors" in out["files"]
    np.testing.assert_array_equal(load_gpt2(tmp_path / "hf").state_dict()["wte.weight"],
                                  model.state_dict()["wte.weight"])


# ---- bad folders ----------------------------------------------------------------------------
@pytest.fixture()
def bert_dir(tmp_path):
    model = BertModel(BertConfig(vocab_size=30, n_layer=1, n_embd=8, n_head=2), rng=np.random.default_rng(0))
    return export(model, tmp_path / "bert")


def _edit_weights(folder, fn):
    path = folder / "model.safetensors"
    arrays, _ = read_safetensors(path)
    write_safetensors(path, fn(arrays))


def test_pickle_is_refused_with_a_conversion_hint(bert_dir):
    (bert_dir / "model.safetensors").rename(bert_dir / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match=r"(?s)pytorch_model\.bin.*pickle.*safetensors"):
        load_bert(bert_dir)


def test_missing_key_is_named(bert_dir):
    _edit_weights(bert_dir, lambda a: {k: v for k, v in a.items() if "layer.0.output.dense.weight" not in k})
    with pytest.raises(CheckpointError, match=r"model\.safetensors.*missing.*encoder\.layer\.0\.output\.dense\.weight"):
        load_bert(bert_dir)


def test_unexpected_key_is_named(bert_dir):
    _edit_weights(bert_dir, lambda a: {**a, "encoder.layer.7.extra.weight": np.zeros(3, np.float32)})
    with pytest.raises(CheckpointError, match=r"unexpected keys.*encoder\.layer\.7\.extra\.weight"):
        load_bert(bert_dir)


def test_wrong_shape_is_named(bert_dir):
    _edit_weights(bert_dir, lambda a: {**a, "pooler.dense.bias": np.zeros(5, np.float32)})
    with pytest.raises(CheckpointError, match=r"pooler\.dense\.bias: shape \(5,\), expected \(8,\)"):
        load_bert(bert_dir)


@pytest.mark.parametrize("key, value, words", [
    ("hidden_act", "swish", "hidden_act"),
    ("position_embedding_type", "relative_key", "position_embedding_type"),
    ("is_decoder", True, "is_decoder"),
    ("num_attention_heads", 3, "n_head"),
    ("hidden_size", "eight", "hidden_size"),
    ("model_type", "roberta", "model_type"),
])
def test_unsupported_config_is_named(bert_dir, key, value, words):
    path = bert_dir / "config.json"
    config = json.loads(path.read_text())
    config[key] = value
    path.write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match=words) as e:
        load_bert(bert_dir)
    assert "config.json" in str(e.value)


def test_truncated_weights_and_missing_config(bert_dir, tmp_path):
    raw = (bert_dir / "model.safetensors").read_bytes()
    (bert_dir / "model.safetensors").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(CheckpointError, match="model.safetensors"):
        load_bert(bert_dir)
    shutil.rmtree(bert_dir)
    with pytest.raises(CheckpointError, match="no such directory"):
        load_bert(bert_dir)


def test_gpt2_unsupported_options(tmp_path):
    folder = export(_gpt(), tmp_path / "g")
    config = json.loads((folder / "config.json").read_text())
    for key, value in [("scale_attn_by_inverse_layer_idx", True), ("tie_word_embeddings", False),
                       ("activation_function", "silu")]:
        (folder / "config.json").write_text(json.dumps({**config, key: value}))
        with pytest.raises(CheckpointError, match=key):
            load_gpt2(folder)
