"""Write tests/data/hf/generate.json: what transformers' greedy ``generate`` gives on the tiny fixtures.

    python tools/make_hf_generate_golden.py [--check]      # in a venv with torch + transformers

For the GPT-2, T5 (v1.0 and v1.1) and BART fixtures of tests/data/hf/ (tools/make_hf_fixtures.py),
a few prompts each: ``tokenizer(prompt)["input_ids"]`` and the new tokens of
``model.generate(input_ids, attention_mask, do_sample=False, num_beams=1, max_new_tokens=N, **rules)``
(the decoder's start token left out, EOS kept). ``rules`` is empty, or one of transformers' logits
processors that ``minilm/pretrained/generate.py`` reproduces (``no_repeat_ngram_size``,
``forced_bos_token_id``, ``forced_eos_token_id``). tests/models/test_pretrained_cli.py compares
minilm's greedy ids with these, without PyTorch; ``--check`` recomputes every case and compares
with the stored file instead of writing it. The script does not import minilm.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "hf"
OUT = DATA / "generate.json"
PROMPTS = ["Bert knows Snuffleupagus", "the cats eat fish.", "Hello world! How are you?"]
CASES = [  # (fixture, max_new_tokens, generation rules)
    ("gpt2", 10, {}), ("gpt2", 9, {"no_repeat_ngram_size": 2}),
    ("t5", 12, {}), ("t5", 10, {"no_repeat_ngram_size": 1, "forced_eos_token_id": 1}),
    ("t5-v1_1", 12, {}), ("t5-v1_1", 8, {"forced_bos_token_id": 5, "no_repeat_ngram_size": 2}),
    ("bart", 12, {}), ("bart", 10, {"forced_bos_token_id": 0, "no_repeat_ngram_size": 2, "forced_eos_token_id": 2}),
]


def greedy_new_tokens(model, tok, prompt: str, n: int, **rules) -> tuple[list[int], list[int]]:
    """``(tokenizer(prompt)["input_ids"], the new tokens of greedy generate)``, the decoder's start token
    left out, cut after the first EOS (rows end at EOS; a batch of one is not padded)."""
    import torch
    ids = tok(prompt)["input_ids"]
    x = torch.tensor([ids])
    with torch.no_grad():
        y = model.generate(input_ids=x, attention_mask=torch.ones_like(x), do_sample=False, num_beams=1,
                           max_new_tokens=n, pad_token_id=tok.pad_token_id, **rules)
    new = y[0, (1 if model.config.is_encoder_decoder else len(ids)):].tolist()
    eos = model.generation_config.eos_token_id
    return ids, new[:new.index(eos) + 1] if eos in new else new


def greedy_cases() -> list[dict]:
    import transformers as tf
    out = []
    for name, n, rules in CASES:
        folder = DATA / name
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        model = getattr(tf, config["architectures"][0]).from_pretrained(folder).eval()
        tok = tf.AutoTokenizer.from_pretrained(folder)
        for prompt in PROMPTS:
            ids, new = greedy_new_tokens(model, tok, prompt, n, **rules)
            out.append({"fixture": name, "prompt": prompt, "input_ids": ids, "max_new_tokens": n,
                        "rules": rules, "generated": new})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="recompute and compare with the stored file")
    args = ap.parse_args(argv)
    import transformers
    cases = greedy_cases()
    if args.check:
        stored = json.loads(OUT.read_text(encoding="utf-8"))["cases"]
        same = [a == b for a, b in zip(cases, stored)]
        print(f"{sum(same)}/{len(stored)} cases equal the stored ids")
        return 0 if all(same) and len(cases) == len(stored) else 1
    OUT.write_text(json.dumps({"transformers": transformers.__version__, "cases": cases}, indent=1) + "\n",
                   encoding="utf-8")
    print(f"{OUT}: {len(cases)} cases, {sum(len(c['generated']) for c in cases)} generated tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
