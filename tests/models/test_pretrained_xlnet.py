"""The released XLNet (minilm/models/xlnet_released.py) against transformers' XLNetLMHeadModel:
a tiny random checkpoint (tests/data/hf/xlnet/, written by tools/make_hf_fixtures.py) →
``load_pretrained`` → the same logits on a left-padded batch, on the two-stream inputs
(perm_mask, target_mapping, token_type_ids), and the tokenizer's ids; export → load round trips;
memory. No PyTorch or transformers needed, except by the last test (skipped without them)."""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from autograd import no_grad
from autograd.errors import CheckpointError
from minilm.models.xlnet_released import XLNetReleased, XLNetReleasedConfig, relative_positions
from minilm.pretrained import export, hf_logits, load_pretrained
from minilm.pretrained.safetensors_file import read_safetensors, write_safetensors
from tests.models.hf_fixture_tool import fixture_tool

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hf"
XLNET = DATA / "xlnet"
TOLERANCE = 1e-4   # max abs, float32 (the bar; measured 2.4e-7)
NFKC_CASES = ["ﬁne ① ｆｕｌｌ　ｗｉｄｔｈ Ⅻ ™ ½ ㎞", "e\u0301 a\u0308 n\u0303 ḱ\u0323", "👨\u200d👩\u200d👧 🇹🇼 👍🏽",
              "Ｈｅｌｌｏ，　ｗｏｒｌｄ！", "x\u00a0y\u2003z", "tab\there  and   runs", "\u3000全角スペース", "ﾊﾝｶｸ ｶﾀｶﾅ",
              "Å Ω K"]   # tools/make_hf_fixtures_spm.py's list (a student release has no tools/make_*)


def expected() -> dict:
    with np.load(XLNET / "expected.npz", allow_pickle=False) as f:
        return dict(f)


def two_stream(model, e: dict) -> np.ndarray:
    with no_grad():
        out = model(e["input_ids"], e["attention_mask"], perm_mask=e["perm_mask"],
                    target_mapping=e["target_mapping"], token_type_ids=e["token_type_ids"])
    return out["logits"].data


def test_logits_equal_transformers_on_a_left_padded_batch():
    model, _ = load_pretrained(XLNET)
    e = expected()
    assert (e["attention_mask"][:, 0] == 0).any(), "XLNet's tokenizer pads on the left"
    got = hf_logits(model, e["input_ids"], e["attention_mask"])
    assert got.shape == e["logits"].shape
    diff = float(np.abs(got - e["logits"]).max())
    assert diff < TOLERANCE, (f"XLNet: logits differ from XLNetLMHeadModel's by {diff:.2e}: check the relative "
                              "shift (distance M + i − j), the r_w/r_r biases, post-LN, or the exact GELU")


def test_two_stream_logits_equal_transformers():
    """perm_mask (a factorisation order), three targets a row through target_mapping, and the
    tokenizer's token_type_ids (<cls> is segment 2): the query stream's (B, P, V) logits."""
    model, _ = load_pretrained(XLNET)
    e = expected()
    got = two_stream(model, e)
    assert got.shape == e["logits_two_stream"].shape == (3, 3, model.config.vocab_size)
    diff = float(np.abs(got - e["logits_two_stream"]).max())
    assert diff < TOLERANCE, (f"XLNet's query stream differs from transformers' by {diff:.2e}: g starts at mask_emb, "
                              "sees perm_mask as is (h clears its diagonal), and segments add (q + r_s)·seg_embed")


def test_tokenizer_ids_equal_transformers():
    """tokens.json's texts, then the 514 lines of lines.npz and the NFKC cases (line_ids.npz):
    Unigram, NFKD + StripAccents + Precompiled, and ``<sep> <cls>`` at the end."""
    _, tok = load_pretrained(XLNET)
    ref = json.loads((XLNET / "tokens.json").read_text(encoding="utf-8"))
    for text, ids in zip(ref["texts"], ref["input_ids"]):
        assert tok.encode(text, add_special_tokens=True) == ids, f"{text!r}: transformers gave {ids}"
    assert tok.encode("a", add_special_tokens=True)[-2:] == [tok.token_to_id("<sep>"), tok.token_to_id("<cls>")]
    with np.load(DATA / "lines.npz", allow_pickle=False) as f:
        texts = [str(t) for t in f["texts"]] + NFKC_CASES
    with np.load(XLNET / "line_ids.npz", allow_pickle=False) as f:
        ids, off = f["ids"], f["offsets"]
    assert len(texts) == len(off) - 1 >= 500
    bad = [(t, tok.encode(t, add_special_tokens=True), ids[off[k]:off[k + 1]].tolist()) for k, t in enumerate(texts)]
    bad = [b for b in bad if b[1] != b[2]]
    assert not bad, f"{len(bad)} of {len(texts)} lines differ, first {bad[0][0]!r}: {bad[0][1]} vs {bad[0][2]}"


def _copy_tokenizer(tmp: Path) -> None:
    for f in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(XLNET / f, tmp / f)


def test_a_bare_xlnet_model_file_loads(tmp_path):
    """An ``XLNetModel`` save (no ``transformer.`` prefix, no ``lm_loss.*``: zero output bias) gives the
    fixture's logits minus lm_loss.bias. Its LayerNorms are ``layer_norm``: a ``layer_norm.gamma`` is
    not a name transformers renames (only ``LayerNorm.gamma`` / ``.beta``), so it is an unexpected key."""
    _copy_tokenizer(tmp_path)
    arrays, _ = read_safetensors(XLNET / "model.safetensors")
    bias = arrays.pop("lm_loss.bias")
    arrays.pop("lm_loss.weight", None)
    bare = {k[len("transformer."):]: v for k, v in arrays.items()}
    write_safetensors(tmp_path / "model.safetensors", bare, {"format": "pt"})
    model, _ = load_pretrained(tmp_path, tokenizer=False)
    e = expected()
    np.testing.assert_allclose(hf_logits(model, e["input_ids"], e["attention_mask"]), e["logits"] - bias,
                               atol=TOLERANCE)
    gamma = {k.replace("layer_norm.weight", "layer_norm.gamma"): v for k, v in bare.items()}
    write_safetensors(tmp_path / "model.safetensors", gamma, {"format": "pt"})
    with pytest.raises(CheckpointError, match=r"missing keys \['layer\.0\.ff\.layer_norm\.weight'"):
        load_pretrained(tmp_path, tokenizer=False)


def test_a_tied_head_copy_is_checked(tmp_path):
    _copy_tokenizer(tmp_path)
    arrays, _ = read_safetensors(XLNET / "model.safetensors")
    arrays["lm_loss.weight"] = arrays["transformer.word_embedding.weight"].copy()
    write_safetensors(tmp_path / "model.safetensors", arrays, {"format": "pt"})
    load_pretrained(tmp_path, tokenizer=False)                         # an equal copy: fine
    arrays["lm_loss.weight"] = arrays["lm_loss.weight"] + 1.0
    write_safetensors(tmp_path / "model.safetensors", arrays, {"format": "pt"})
    with pytest.raises(CheckpointError, match="lm_loss.weight.*differs"):
        load_pretrained(tmp_path, tokenizer=False)


@pytest.mark.parametrize("key, value", [("attn_type", "uni"), ("bi_data", True), ("d_head", 3)])
def test_unsupported_configs_are_refused(tmp_path, key, value):
    _copy_tokenizer(tmp_path)
    shutil.copy(XLNET / "model.safetensors", tmp_path / "model.safetensors")
    config = json.loads((XLNET / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, key: value}))
    with pytest.raises(CheckpointError, match=key):
        load_pretrained(tmp_path)


def fresh_model(**changes) -> XLNetReleased:
    """A minilm-built XLNetReleased (clamped distances, tanh GELU) with every weight off its init."""
    rng = np.random.default_rng(5)
    config = XLNetReleasedConfig(**{"vocab_size": 40, "n_embd": 16, "n_layer": 2, "n_head": 2, "n_inner": 24,
                                    "clamp_len": 3, "activation": "gelu", **changes})
    model = XLNetReleased(config, rng=rng)
    for p in model.parameters():
        p.data += rng.normal(0, 0.05, p.shape).astype(p.data.dtype)
    return model.eval()


def test_export_then_load_pretrained_gives_the_same_logits(tmp_path):
    model = fresh_model()
    ids = np.array([[0, 0, 9, 10, 11, 4, 3], [12, 13, 14, 15, 16, 4, 3]])
    mask = (ids != 0).astype(np.int64)
    e = {"input_ids": ids, "attention_mask": mask, "perm_mask": np.triu(np.ones((2, 7, 7)), 0),
         "target_mapping": np.eye(7)[None, [4, 2]].repeat(2, axis=0), "token_type_ids": np.array([[0] * 6 + [2]] * 2)}
    back, tok = load_pretrained(export(model, tmp_path / "xlnet"))
    assert tok is None and isinstance(back, XLNetReleased)
    assert back.config.clamp_len == 3 and back.config.activation == "gelu"
    np.testing.assert_allclose(hf_logits(back, ids, mask), hf_logits(model, ids, mask), atol=1e-6)
    np.testing.assert_allclose(two_stream(back, e), two_stream(model, e), atol=1e-6)
    config = json.loads((tmp_path / "xlnet" / "config.json").read_text())
    assert (config["architectures"], config["ff_activation"], config["attn_type"]) == (["XLNetLMHeadModel"],
                                                                                      "gelu_new", "bi")


def test_a_loaded_checkpoint_exports_with_its_tokenizer(tmp_path):
    """fixture → load_pretrained → export(model, DIR, tokenizer=tok) → load_pretrained: the same
    logits and the same ids (the tokenizer.json is copied; transformers reads it: last test)."""
    model, tok = load_pretrained(XLNET)
    back, tok2 = load_pretrained(export(model, tmp_path / "xlnet", tokenizer=tok))
    e = expected()
    np.testing.assert_allclose(hf_logits(back, e["input_ids"], e["attention_mask"]), e["logits"], atol=TOLERANCE)
    ref = json.loads((XLNET / "tokens.json").read_text(encoding="utf-8"))
    assert [tok2.encode(t, add_special_tokens=True) for t in ref["texts"]] == ref["input_ids"]
    config = json.loads((tmp_path / "xlnet" / "config.json").read_text())
    assert (config["pad_token_id"], config["bos_token_id"], config["eos_token_id"]) == (5, 1, 2)


def test_memory_gives_what_one_long_input_gives():
    """Segment b after segment a with mems (a's layer inputs) = the joint input [a ∘ b] in which a's
    tokens may not see b's: the relative distances M + i − j are the same in both."""
    model = fresh_model(clamp_len=-1, activation="gelu_exact")
    a, b = np.array([[5, 6, 7, 8]]), np.array([[9, 10, 11]])
    joint = np.concatenate([a, b], axis=1)
    perm = np.zeros((1, 7, 7))
    perm[0, :4, 4:] = 1                                                 # a does not see b
    with no_grad():
        first = model(a)
        second = model(b, mems=first["mems"])
        whole = model(joint, perm_mask=perm)
    np.testing.assert_allclose(second["logits"].data, whole["logits"].data[:, 4:], atol=1e-5)
    assert [m.shape for m in second["mems"]] == [(1, 7, 16)] * 2          # mem_len None: everything kept
    short = fresh_model(mem_len=2)
    with no_grad():
        assert [m.shape for m in short(a)["mems"]] == [(1, 2, 16)] * 2


def test_gradients_reach_every_parameter_and_match_central_differences():
    """float64, both streams, segments, padding and clamped distances: each parameter gets a gradient,
    and one entry of each agrees with central differences (the model can be trained, not only run)."""
    rng = np.random.default_rng(0)
    model = XLNetReleased(XLNetReleasedConfig(vocab_size=20, n_embd=8, n_layer=2, n_head=2, n_inner=12, clamp_len=2),
                          rng=rng).to(np.float64)
    ids = np.array([[0, 3, 4, 5, 6], [7, 8, 9, 10, 11]])
    kwargs = dict(attention_mask=(ids != 0).astype(int), perm_mask=np.triu(np.ones((2, 5, 5))),
                  target_mapping=np.eye(5)[None, [4, 2]].repeat(2, axis=0), token_type_ids=np.array([[0, 0, 1, 1, 2]] * 2),
                  labels=np.array([[6, 4], [11, -100]]))

    def loss():
        return model(ids, **kwargs)["loss"]
    loss().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and np.abs(p.grad).max() > 0, f"{name} gets no gradient"
        idx = np.unravel_index(np.abs(p.grad).argmax(), p.shape)     # the largest entry of each
        old = p.data[idx]
        p.data[idx] = old + 1e-5
        with no_grad():
            up = float(loss().data)
        p.data[idx] = old - 1e-5
        with no_grad():
            down = float(loss().data)
        p.data[idx] = old
        assert abs((up - down) / 2e-5 - p.grad[idx]) < 1e-6, f"{name}{idx}: backward disagrees with the loss"


def test_relative_positions_are_the_distances_k_down_to_minus_t():
    pos = relative_positions(T=3, K=5, C=4)                              # distances 5, 4, ..., −2
    assert pos.shape == (8, 4)
    np.testing.assert_allclose(pos[5], [0, 0, 1, 1])                     # distance 0: sin 0, cos 0
    np.testing.assert_allclose(pos[0, 0], np.sin(5.0), rtol=1e-6)
    clamped = relative_positions(T=3, K=5, C=4, clamp_len=1)
    np.testing.assert_allclose(clamped[0], clamped[4])                   # 5 and 1 clamp to 1


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None or importlib.util.find_spec("torch") is None,
                    reason="re-deriving the fixture needs torch and transformers (tools/make_hf_fixtures.py)")
def test_fixture_is_what_transformers_computes(tmp_path):
    """The stored arrays and ids are what transformers computes from the stored folder, and an
    exported XLNetReleased gives AutoModelForCausalLM the same logits."""
    make_hf_fixtures = fixture_tool()
    diff, same = make_hf_fixtures.check("xlnet", XLNET)
    assert diff < 1e-5 and same, f"xlnet: transformers now gives logits {diff:.2e} away / other ids"
    assert make_hf_fixtures.NFKC_CASES == NFKC_CASES
    ids = np.array([[0, 0, 9, 10, 11, 4, 3], [12, 13, 14, 15, 16, 4, 3]])
    diff = make_hf_fixtures.xlnet_export_check(tmp_path, ids, (ids != 0).astype(np.int64), np.random.default_rng(3))
    assert diff < TOLERANCE, f"export xlnet: transformers' logits differ by {diff:.2e}"
    import torch
    import transformers
    model, tok = load_pretrained(XLNET)
    folder = export(model, tmp_path / "with-tokenizer", tokenizer=tok)
    theirs = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    e = expected()
    with torch.no_grad():
        logits = theirs(input_ids=torch.tensor(e["input_ids"]), attention_mask=torch.tensor(e["attention_mask"])).logits
    assert float(np.abs(logits.numpy() - e["logits"]).max()) < TOLERANCE
    ref = json.loads((XLNET / "tokens.json").read_text(encoding="utf-8"))
    hf_tok = transformers.AutoTokenizer.from_pretrained(folder)
    assert [hf_tok(t)["input_ids"] for t in ref["texts"]] == ref["input_ids"]
    assert hf_tok.padding_side == "left"
