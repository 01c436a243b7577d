"""The rest of the course's hands-on on loaded checkpoints: ``minilm generate --hf``, ELECTRA's
replaced-token view (``minilm inspect --replaced``) and ``minilm embed --static`` on every encoder
(minilm/pretrained/{generate,replaced,static_words}.py).

On the tiny fixtures of tests/data/hf/, without PyTorch or transformers: greedy generation is
compared token for token with what transformers' ``generate`` returned (tests/data/hf/generate.json,
written by tools/make_hf_generate_golden.py), the replaced-token probabilities with the sigmoid of
the logits transformers returned (expected.npz), and every ``minilm`` command that
docs/pretrained.md shows is parsed by the real command line.
"""
from __future__ import annotations

import importlib.util
import json
import re
import shlex
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from autograd.errors import CheckpointError, ConfigError
from minilm import cli
from minilm.pretrained import hf_logits
from minilm.pretrained.generate import apply_rules, ban_repeated_ngrams, generate_ids, load_for_generate
from minilm.pretrained.inspect import hidden_states, load_for_inspect
from minilm.pretrained.replaced import generator_view, replaced_view, sigmoid

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hf"
GOLDEN = json.loads((DATA / "generate.json").read_text(encoding="utf-8"))
ENCODERS = ["bert", "roberta", "distilbert", "electra-discriminator", "electra-generator"] + [
    name for name in ("deberta", "deberta-v2") if (DATA / name / "config.json").is_file()]


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def generators():
    return {name: load_for_generate(DATA / name) for name in ("gpt2", "t5", "t5-v1_1", "bart")}


# ---- generate --hf -------------------------------------------------------------------------------
@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: f"{c['fixture']}-{len(c['input_ids'])}-"
                                                              + ("rules" if c["rules"] else "plain"))
def test_greedy_generation_equals_transformers(generators, case):
    gen = generators[case["fixture"]]
    prompt = gen.prompt_ids(case["prompt"])
    assert prompt == case["input_ids"], f"{case['fixture']}: the prompt's ids differ from transformers' tokenizer"
    saved, gen.rules = gen.rules, case["rules"]
    try:
        out = generate_ids(gen, prompt, case["max_new_tokens"], greedy=True)[0]
    finally:
        gen.rules = saved
    assert out == case["generated"], (
        f"{case['fixture']} with rules {case['rules']}: minilm {out}, transformers {case['generated']}; "
        "the decoder's start token, the EOS stop or a generation rule differs")


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None or importlib.util.find_spec("torch") is None,
                    reason="re-deriving generate.json needs torch and transformers (tools/make_hf_generate_golden.py)")
def test_the_golden_ids_are_what_transformers_generates():
    if not (ROOT / "tools" / "make_hf_generate_golden.py").is_file():
        pytest.skip("tools/make_hf_generate_golden.py is not in this copy (a student release leaves tools/make_* out)")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import make_hf_generate_golden
    finally:
        sys.path.pop(0)
    assert make_hf_generate_golden.greedy_cases() == GOLDEN["cases"], "transformers' greedy ids changed"


def test_the_golden_file_covers_every_decoder_and_rule():
    kinds = {c["fixture"] for c in GOLDEN["cases"]}
    rules = {k for c in GOLDEN["cases"] for k in c["rules"]}
    assert kinds == {"gpt2", "t5", "t5-v1_1", "bart"}
    assert rules == {"no_repeat_ngram_size", "forced_bos_token_id", "forced_eos_token_id"}
    assert any(len(c["generated"]) < c["max_new_tokens"] for c in GOLDEN["cases"]), "no case stops at EOS"


def test_the_start_and_stop_ids_come_from_the_config(generators):
    assert (generators["t5"].start_id, generators["t5"].eos_id) == (0, 1)          # <pad> … </s>
    assert (generators["bart"].start_id, generators["bart"].eos_id) == (2, 2)      # </s> … </s>
    assert generators["gpt2"].seq2seq is False and generators["gpt2"].prompt_ids("") == []


def test_rules_come_from_generation_config_json_else_from_config_json(tmp_path):
    """transformers 5.24 (checked by hand on this fixture): with generation_config.json present, the
    generation settings of config.json are ignored; without it, they are used."""
    folder = tmp_path / "bart"
    shutil.copytree(DATA / "bart", folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config.update(no_repeat_ngram_size=3, forced_bos_token_id=0, repetition_penalty=1.2)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    gen = load_for_generate(folder)
    assert gen.rules == {} and gen.start_id == 2
    (folder / "generation_config.json").unlink()
    gen = load_for_generate(folder)
    assert gen.rules == {"no_repeat_ngram_size": 3, "forced_bos_token_id": 0, "repetition_penalty": 1.2}


def test_no_repeat_ngram_bans_the_completing_token():
    seqs = np.array([[5, 6, 7, 5, 6]])                                 # "5 6" seen, then "6 7"
    logits = ban_repeated_ngrams(seqs, np.zeros((1, 10)), 3)          # (5, 6) was followed by 7
    assert np.isneginf(logits[0, 7]) and np.isfinite(np.delete(logits[0], 7)).all()
    assert np.isneginf(ban_repeated_ngrams(seqs, np.zeros((1, 10)), 1)[0, [5, 6, 7]]).all()
    forced = apply_rules(np.zeros((1, 10)), seqs, 3, 4, {"forced_eos_token_id": 2})
    assert forced[0].argmax() == 2 and np.isneginf(np.delete(forced[0], 2)).all()


def test_sampling_follows_the_seed_and_top_k_1_is_greedy(generators):
    gen = generators["t5"]
    prompt = gen.prompt_ids("the cats eat fish.")
    a = generate_ids(gen, prompt, 6, rng=np.random.default_rng(3), num_samples=3)
    b = generate_ids(gen, prompt, 6, rng=np.random.default_rng(3), num_samples=3)
    assert a == b and len(a) == 3
    assert generate_ids(gen, prompt, 6, rng=np.random.default_rng(0), top_k=1) == generate_ids(gen, prompt, 6, greedy=True)


def test_a_prompt_longer_than_gpt2s_context_is_refused(generators):
    gen = generators["gpt2"]
    with pytest.raises(ConfigError, match="n_positions"):
        generate_ids(gen, [5] * (gen.block_size + 1), 3, greedy=True)


def test_generate_hf_command(capsys):
    case = next(c for c in GOLDEN["cases"] if c["fixture"] == "t5" and not c["rules"])
    code, out, _ = run_cli(capsys, "generate", "--hf", DATA / "t5", "--prompt", case["prompt"], "--greedy",
                           "--max-new-tokens", case["max_new_tokens"], "--json")
    assert code == 0
    r = json.loads(out)
    assert r["prompt_ids"] == case["input_ids"] and r["completions"][0]["ids"] == case["generated"]
    code, out, err = run_cli(capsys, "generate", "--hf", DATA / "gpt2", "--prompt", "the cats", "--top-p", "0.9",
                             "--max-new-tokens", 4)
    assert code == 0 and out.startswith("the cats") and "temperature 1.0, top-p 0.9" in err
    code, _, err = run_cli(capsys, "generate", "--hf", DATA / "bert", "--prompt", "x")
    assert code == 1 and "needs a decoder" in err
    code, _, err = run_cli(capsys, "generate")
    assert code == 1 and "CKPT or --hf DIR" in err


# ---- ELECTRA's replaced-token view ---------------------------------------------------------------
def test_replaced_view_is_the_sigmoid_of_transformers_logits():
    model, tok, _ = load_for_inspect(DATA / "electra-discriminator")
    text = "Bert knows Snuffleupagus"                                    # the first text of expected.npz
    with np.load(DATA / "electra-discriminator" / "expected.npz", allow_pickle=False) as f:
        ids, mask, logits = f["input_ids"][0], f["attention_mask"][0], f["logits"][0]
    r = replaced_view(model, tok, text)
    T = int(mask.sum())
    assert r["ids"] == ids[:T].tolist()
    np.testing.assert_allclose(r["p_replaced"], 1 / (1 + np.exp(-logits[:T].astype(np.float64))), atol=1e-5)
    assert r["special"][0] and r["special"][-1] and not any(r["special"][1:-1])
    assert sigmoid(np.array([-800.0, 0.0, 800.0])).tolist() == [0.0, 0.5, 1.0]


def shared_vocab_generator(tmp_path) -> Path:
    """The generator fixture's weights with the discriminator's tokenizer: the two fixtures' trainers
    gave different vocabularies; the released ELECTRA pair shares one."""
    folder = tmp_path / "generator"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(DATA / "electra-generator" / name, folder / name)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(DATA / "electra-discriminator" / name, folder / name)
    return folder


def test_generator_view_labels_only_changed_masked_tokens(tmp_path):
    model, tok, _ = load_for_inspect(DATA / "electra-discriminator")
    generator, gen_tok, _ = load_for_inspect(shared_vocab_generator(tmp_path))
    text = "the cats eat fish and the dogs chase cats"
    changed = 0
    for seed in range(8):
        r = generator_view(model, generator, tok, text, rng=np.random.default_rng(seed), mask_prob=0.3,
                           generator_tok=gen_tok)
        for i, t in enumerate(r["tokens"]):
            if not r["masked"][i]:
                assert r["corrupted"][i] == t and r["sampled"][i] is None and r["replaced"][i] == 0
            else:
                assert r["corrupted"][i] == r["sampled"][i]
                assert r["replaced"][i] == int(r["sampled"][i] != t), "a sample equal to the original is 'original'"
        assert r["tokens"][0] == "[CLS]" and not r["masked"][0] and not r["masked"][-1]
        ids = tok.convert_tokens_to_ids(r["corrupted"])
        np.testing.assert_allclose(r["p_replaced"], sigmoid(hf_logits(model, [ids])[0]), rtol=1e-6)
        changed += sum(r["replaced"])
    assert changed > 0
    again = generator_view(model, generator, tok, text, rng=np.random.default_rng(7), mask_prob=0.3)
    assert again == r, "the same seed must give the same corruption"


def test_replaced_view_refuses_other_heads_and_mismatched_vocabularies():
    model, tok, _ = load_for_inspect(DATA / "electra-discriminator")
    generator, gen_tok, _ = load_for_inspect(DATA / "electra-generator")
    with pytest.raises(ConfigError, match="vocabulary"):
        generator_view(model, generator, tok, "the cats", rng=np.random.default_rng(0), generator_tok=gen_tok)
    with pytest.raises(ConfigError, match="ELECTRA discriminator"):
        replaced_view(generator, gen_tok, "the cats")


def test_inspect_replaced_command(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "inspect", DATA / "electra-discriminator", "--text", "the chef ate the meal",
                           "--replaced")
    assert code == 0 and "| # | piece | id | p(replaced) |" in out and "most suspicious:" in out
    code, out, _ = run_cli(capsys, "inspect", DATA / "electra-discriminator", "--text", "the cats eat fish",
                           "--replaced", "--generator", shared_vocab_generator(tmp_path), "--json")
    r = json.loads(out)
    assert code == 0 and sum(r["masked"]) >= 1 and len(r["p_replaced"]) == len(r["tokens"])
    code, _, err = run_cli(capsys, "inspect", DATA / "bert", "--replaced")
    assert code == 1 and "ELECTRA discriminator" in err


# ---- embed --static on every encoder -------------------------------------------------------------
@pytest.mark.parametrize("name", ENCODERS)
def test_static_encoder_gives_every_hidden_state_padded_or_not(name):
    from minilm.downstream.static import bert_encoder
    from minilm.pretrained.static_words import load_static_encoder
    pretrained, enc, tok = load_static_encoder(DATA / name)
    model, _, _ = load_for_inspect(DATA / name)
    seqs = [[tok.cls_id, *tok.encode("armadillo"), tok.sep_id],
            [tok.cls_id, *tok.encode("we talked about the hedgehog for an hour ."), tok.sep_id]]
    batched = bert_encoder(enc, tok.pad_id)(seqs)                        # one padded batch
    assert enc.config.n_layer == 2 and batched[0].shape[:2] == (3, len(seqs[0]))
    for s, h in zip(seqs, batched):
        alone = np.stack(hidden_states(model, [s]))[:, 0]                # (L+1, T, C)
        np.testing.assert_allclose(h, alone, atol=1e-5, err_msg=f"{name}: padding changed a hidden state")


@pytest.mark.parametrize("name", [n for n in ENCODERS if n.startswith("deberta")])
def test_deberta_hidden_states_start_at_the_embeddings(name):
    """h_0 is what transformers' DebertaV2Embeddings returns (LayerNorm, padded rows zeroed): measured
    against output_hidden_states=True on these fixtures, max |Δ| 1.4e-6 over all 3 states."""
    model, _, _ = load_for_inspect(DATA / name)
    with np.load(DATA / name / "expected.npz", allow_pickle=False) as f:
        ids, mask = f["input_ids"], f["attention_mask"]
    states = hidden_states(model, ids, mask)
    assert len(states) == model.config.n_layer + 1
    assert np.all(states[0][mask == 0] == 0) and np.abs(states[0][mask == 1]).max() > 0
    row = int(np.argmin(mask.sum(1)))                                     # the most padded row, alone
    alone = hidden_states(model, ids[row:row + 1, :int(mask[row].sum())])
    for h, a in zip(states, alone):
        np.testing.assert_allclose(h[row, :a.shape[1]], a[0], atol=1e-5)


def test_byte_level_words_take_their_in_sentence_pieces():
    from minilm.pretrained.static_words import load_static_encoder
    _, enc, tok = load_static_encoder(DATA / "roberta")
    pieces = tok.inner.convert_ids_to_tokens(tok.encode("armadillo"))
    assert pieces[0].startswith("Ġ"), pieces
    assert tok.encode("fish") == tok.inner.encode(" the cats eat fish")[-len(tok.encode("fish")):]
    assert (tok.cls_id, tok.sep_id, tok.pad_id) == (0, 2, 1)             # <s>, </s>, <pad>
    assert enc.config.max_position_embeddings == 40                      # 42 rows, positions from 2


def test_embed_static_command_on_roberta_and_electra(capsys, tmp_path):
    for name in ("roberta", "electra-discriminator"):
        code, out, _ = run_cli(capsys, "embed", "--static", DATA / name, "--words", "english", "--pooling", "mean",
                               "last", "--out", tmp_path / f"{name}.png", "--json")
        assert code == 0
        r = json.loads(out)
        assert r["n_layers"] == 2 and len(r["rows"]) == 2 * 2 * 3 and (tmp_path / f"{name}.png").is_file()
        assert all(0.0 <= row["auc"] <= 1.0 for row in r["rows"]) and "pooler_vs_cls" not in r


def test_embed_static_refuses_a_decoder():
    from minilm.pretrained.static_words import load_static_encoder
    for name in ("gpt2", "t5", "bart"):
        with pytest.raises(ConfigError, match="bidirectional encoder"):
            load_static_encoder(DATA / name)
    with pytest.raises(CheckpointError):
        load_static_encoder(ROOT / "tests" / "data")
    if (DATA / "xlnet" / "config.json").is_file():
        with pytest.raises(ConfigError, match="does not expose"):
            load_static_encoder(DATA / "xlnet")


# ---- docs/pretrained.md: every command it shows parses ---------------------------------------------
def documented_commands(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M):
        lines += [line.split(" #")[0].strip() for line in block.splitlines()
                  if line.startswith("minilm ") and not re.match(r"minilm [\w-]+: ", line)]   # not an error shown
    return lines


@pytest.mark.parametrize("page", [ROOT / "docs" / "pretrained.md", ROOT / "docs" / "pretrained.zh-TW.md"],
                         ids=lambda p: p.name)
def test_every_documented_command_parses(page):
    if not page.exists():
        pytest.skip(f"{page.name} not written")
    commands = documented_commands(page)
    assert len(commands) >= 8, f"{page.name}: only {len(commands)} minilm commands found"
    parser = cli.build_parser()
    for line in commands:
        words = shlex.split(re.sub(r"\s\[-[^\]]*\]", "", line))[1:]      # optional [--flag ...] left out
        try:
            parser.parse_args(words)
        except SystemExit:
            pytest.fail(f"{page.name}: `{line}` does not parse with minilm's command line")


def test_the_translation_repeats_the_english_code_blocks():
    zh = ROOT / "docs" / "pretrained.zh-TW.md"
    if not zh.exists():
        pytest.skip("no translation yet")
    fence = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
    en_blocks = fence.findall((ROOT / "docs" / "pretrained.md").read_text(encoding="utf-8"))
    zh_blocks = fence.findall(zh.read_text(encoding="utf-8"))
    assert len(zh_blocks) >= 6
    missing = [b.splitlines()[0] for b in zh_blocks if b not in en_blocks]
    assert not missing, f"pretrained.zh-TW.md has code blocks the English page does not: {missing}"


FIXTURE_OF = {"bert-base-cased": "bert", "roberta-base": "roberta", "gpt2": "gpt2", "t5-small": "t5",
              "bart-base": "bart", "electra-small-discriminator": "electra-discriminator"}


def test_the_step_by_step_hands_on_runs_on_the_fixtures(capsys, tmp_path):
    """docs/pretrained.md's "at home" block, each ckpt/NAME replaced by the fixture of its family
    (the generator by the shared-vocabulary copy) and each --out by a temporary file."""
    text = (ROOT / "docs" / "pretrained.md").read_text(encoding="utf-8")
    block = text.split("### The hands-on at home, step by step", 1)[1].split("```", 2)[1]
    folders = {f"ckpt/{k}": str(DATA / v) for k, v in FIXTURE_OF.items()}
    folders["ckpt/electra-small-generator"] = str(shared_vocab_generator(tmp_path))
    lines = [line for line in block.splitlines() if line.startswith("minilm ")]
    assert len(lines) >= 10
    for n, line in enumerate(lines):
        words = shlex.split(line)[1:]
        words = [folders.get(w, w) for w in words]
        if "--out" in words:
            words[words.index("--out") + 1] = str(tmp_path / f"{n}.png")
        assert not [w for w in words if w.startswith("ckpt/")], f"no fixture stands in for {line}"
        code, _, err = run_cli(capsys, *words)
        assert code == 0, f"`{line}` on the fixtures: exit {code}\n{err}"
