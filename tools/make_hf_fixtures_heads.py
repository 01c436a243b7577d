"""Build the fixtures of issue 24's heads and generation rules in tests/data/hf/, with transformers.

    pip install torch==2.13.0 && pip install transformers       # this tool only (as make_hf_fixtures.py)
    python tools/make_hf_fixtures_heads.py [--out tests/data/hf]   # writes the folders and generation_rules.json
    python tools/make_hf_fixtures_heads.py --check                 # recomputes with transformers, writes nothing

**Heads.** transformers' heads do not all follow the encoder's activation (transformers 5.24,
``models/*/modeling_*.py``): BERT's ``BertPredictionHeadTransform`` (``config.hidden_act``),
DistilBERT's ``vocab_transform`` (``config.activation``) and ELECTRA's discriminator head
(``config.hidden_act``) do; RoBERTa's ``RobertaLMHead`` and ELECTRA's ``ElectraGeneratorPredictions``
always use the exact GELU. Each folder of :data:`HEADS` is a tiny random model of one family with an
activation where the two rules give other logits (and an ELECTRA generator whose ``intermediate_size``
is not 4 x hidden): the source fixture's config (tools/make_hf_fixtures.py's ``tiny``) with a few keys
changed, weights moved off their init as ``perturb`` does, ``model.safetensors`` from
``save_pretrained``, the source's tokenizer files (copied: the same vocabulary) and ``expected.npz``
(allow_pickle=False): the source fixture's padded batch (``input_ids``, ``attention_mask``) and the
``logits`` transformers returns for it, float32. tests/models/test_pretrained_heads.py loads them
with minilm, without PyTorch.

**Generation rules.** ``generation_rules.json``: for each case of :data:`GENERATION`, the source
fixture's folder with its ``generation_config.json`` replaced by ``generation_config`` (stored in the
case), and for three prompts the new tokens of ``model.generate(input_ids, attention_mask,
do_sample=False, num_beams=1, max_new_tokens=N)``: transformers reads the rules from the file
itself (``repetition_penalty``, ``min_length``, ``min_new_tokens``; an ``eos_token_id`` the tiny models
do produce, so that the length rules matter). tests/models/test_pretrained_generation_rules.py
writes the same folder and compares minilm's greedy ids.

``--check`` loads every stored folder with transformers and recomputes the logits (≤ 1e-5) and the
generated ids (equal). The script does not import minilm.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_hf_fixtures import OUT, perturb  # noqa: E402
from make_hf_generate_golden import PROMPTS, greedy_new_tokens  # noqa: E402

HEADS = {  # folder → (source fixture, config.json keys changed)
    "bert-relu": ("bert", {"hidden_act": "relu"}),
    "distilbert-relu": ("distilbert", {"activation": "relu"}),
    "electra-discriminator-relu": ("electra-discriminator", {"hidden_act": "relu"}),
    "roberta-gelu-new": ("roberta", {"hidden_act": "gelu_new"}),
    "electra-generator-gelu-new-inner": ("electra-generator", {"hidden_act": "gelu_new", "intermediate_size": 24}),
}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "merges.txt",
                   "special_tokens_map.json")
RULES_FILE = "generation_rules.json"
GENERATION = [  # (source fixture, generation_config.json keys set, max_new_tokens)
    ("gpt2", {"repetition_penalty": 1.3}, 10),
    ("gpt2", {"repetition_penalty": 0.7}, 10),                      # < 1: rewards, score·p where score < 0
    ("gpt2", {"eos_token_id": 20, "min_new_tokens": 3}, 8),
    ("gpt2", {"eos_token_id": 20, "min_length": 21}, 8),            # counts the prompt: 21, 12 and 18 tokens
    ("t5", {"repetition_penalty": 0.5}, 8),                         # the decoder start token counts too
    ("t5", {"eos_token_id": 15, "min_length": 4}, 8),
    ("bart", {"repetition_penalty": 3.0}, 8),                       # BART's start token is its EOS
]


def _architecture(folder: Path):
    import transformers as tf
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return getattr(tf, config["architectures"][0]), config


def _logits(model, arrays: dict) -> np.ndarray:
    import torch
    with torch.no_grad():
        out = model(input_ids=torch.tensor(arrays["input_ids"]), attention_mask=torch.tensor(arrays["attention_mask"]))
    return out.logits.numpy().astype(np.float32)


def _inputs(folder: Path) -> dict:
    with np.load(folder / "expected.npz", allow_pickle=False) as f:
        return {k: f[k] for k in ("input_ids", "attention_mask")}


def build_head(name: str, out: Path, seed: int) -> None:
    """Write folder ``name`` (random weights of the changed config, seeded)."""
    import torch
    import transformers as tf
    source, changes = HEADS[name]
    src, target = out / source, out / name
    config = tf.AutoConfig.from_pretrained(src)
    for key, value in changes.items():
        setattr(config, key, value)
    torch.manual_seed(seed)
    model = _architecture(src)[0](config)
    perturb(model, seed)
    model.eval()
    arrays = _inputs(src)
    arrays["logits"] = _logits(model, arrays)
    if target.exists():
        shutil.rmtree(target)
    model.save_pretrained(target)
    for file in TOKENIZER_FILES:
        if (src / file).is_file():
            shutil.copy(src / file, target / file)
    np.savez_compressed(target / "expected.npz", **arrays)


def check_head(name: str, out: Path) -> float:
    """max |stored − recomputed| logits of the stored folder ``name``."""
    folder = out / name
    model = _architecture(folder)[0].from_pretrained(folder).eval()
    with np.load(folder / "expected.npz", allow_pickle=False) as f:
        return float(np.abs(_logits(model, dict(f)) - f["logits"]).max())


def rules_folder(out: Path, source: str, generation_config: dict, target: Path) -> Path:
    """The fixture ``source`` copied to ``target``, its generation_config.json replaced."""
    shutil.copytree(out / source, target)
    (target / "generation_config.json").write_text(json.dumps(generation_config, indent=2) + "\n", encoding="utf-8")
    return target


def generation_cases(out: Path) -> list[dict]:
    """What transformers' greedy ``generate`` gives for every case of :data:`GENERATION` and prompt."""
    import transformers as tf
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (source, rules, n) in enumerate(GENERATION):
            stored = json.loads((out / source / "generation_config.json").read_text(encoding="utf-8"))
            generation_config = {**stored, **rules}
            folder = rules_folder(out, source, generation_config, Path(tmp) / f"{source}-{k}")
            model = _architecture(folder)[0].from_pretrained(folder).eval()
            tok = tf.AutoTokenizer.from_pretrained(folder)
            for prompt in PROMPTS:             # no rules passed: generate reads them from the folder
                ids, new = greedy_new_tokens(model, tok, prompt, n)
                cases.append({"fixture": source, "generation_config": generation_config, "prompt": prompt,
                              "input_ids": ids, "max_new_tokens": n, "generated": new})
    return cases


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="recompute with transformers and compare; write nothing")
    args = ap.parse_args(argv)
    import transformers
    ok = True
    for i, name in enumerate(HEADS):
        if args.check:
            diff = check_head(name, args.out)
            ok = ok and diff <= 1e-5
            print(f"{name}: transformers' logits differ from the stored ones by {diff:.2e}")
        else:
            build_head(name, args.out, seed=101 + i)
            size = sum(p.stat().st_size for p in (args.out / name).iterdir())
            print(f"{name}: {args.out / name} ({size / 1024:.0f} KiB), {HEADS[name][1]} on {HEADS[name][0]}'s config")
    cases = generation_cases(args.out)
    if args.check:
        stored = json.loads((args.out / RULES_FILE).read_text(encoding="utf-8"))["cases"]
        same = sum(a == b for a, b in zip(cases, stored))
        ok = ok and same == len(stored) == len(cases)
        print(f"{RULES_FILE}: {same}/{len(stored)} cases equal the stored ids")
    else:
        (args.out / RULES_FILE).write_text(json.dumps({"transformers": transformers.__version__, "cases": cases},
                                                      indent=1) + "\n", encoding="utf-8")
        print(f"{RULES_FILE}: {len(cases)} cases, {sum(len(c['generated']) for c in cases)} generated tokens")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
