"""``minilm generate CKPT --prompt TEXT``: continue a prompt with a trained GPT checkpoint.

Decoding (``minilm/decoding.py``, Tasks 4.2–4.3): sampling with temperature → top-k → top-p (the
default: plain sampling at temperature 1), ``--greedy``, or ``--beams N`` (beam search with
``--length-penalty``). Generation stops after ``--max-new-tokens`` or at the end-of-text token:
the tokenizer's EOS, or its [SEP] (``minilm train gpt`` ends every document with [SEP]);
``--no-stop`` ignores it.

A prompt longer than the model's context (its ``block_size``) is an error naming both lengths — we
do not silently drop the start of what you wrote. Once the text outgrows the context, the model
sees only its last ``block_size`` tokens.

``minilm generate --hf DIR --prompt TEXT``: the same rules on a Hugging Face GPT-2, T5 or BART folder
(``minilm/pretrained/generate.py``). For T5 and BART the prompt is the encoder's input and the
output is the decoder's text, from the config's ``decoder_start_token_id`` to its ``eos_token_id``;
``--greedy`` gives transformers' ``generate(do_sample=False, num_beams=1)`` token for token, with the
decoding rules of the folder's ``generation_config.json``; a rule minilm does not apply is an error.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from autograd.errors import ConfigError, MiniLMError
from minilm.cli import add_common

ORDER = 3

DESCRIPTION = """\
Continue --prompt with a GPT trained by 'minilm train gpt'. Decoding: sampling with
temperature -> top-k -> top-p (default: plain sampling at temperature 1), --greedy, or --beams N
(beam search, score = sum log p / L^length_penalty). Generation stops after --max-new-tokens or
at the end-of-text token (the tokenizer's EOS, else [SEP]); --no-stop ignores it.
A prompt longer than the model's context (block_size) is an error; once the text outgrows the
context the model sees its last block_size tokens. --json prints the completions as JSON.

--hf DIR instead of CKPT: a Hugging Face GPT-2, T5 or BART folder (config.json, model.safetensors,
tokenizer.json). GPT-2 continues the prompt; T5 and BART read it with their encoder and write the
decoder's text, from the config's decoder_start_token_id until its eos_token_id. --greedy equals
transformers' generate(do_sample=False, num_beams=1, max_new_tokens=N) token for token, with the
checkpoint's repetition_penalty / no_repeat_ngram_size / min_length / min_new_tokens /
forced_bos_token_id / forced_eos_token_id (generation_config.json); any other rule set there that
would change the tokens (encoder_repetition_penalty, bad_words_ids, suppress_tokens, ...) is an error."""


def register(sub):
    p = sub.add_parser("generate", help="continue a prompt with a trained GPT checkpoint, or a GPT-2 / T5 / BART folder (--hf)",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", metavar="CKPT", nargs="?",
                   help="a checkpoint written by minilm train gpt (checkpoint.npz); or give --hf DIR")
    p.add_argument("--hf", metavar="DIR", help="a Hugging Face folder instead: gpt2, t5 or bart")
    p.add_argument("--prompt", default="", help="the text to continue (default: start a new document)")
    p.add_argument("--max-new-tokens", type=int, default=40, help="tokens to add at most (default 40)")
    p.add_argument("--temperature", type=float, default=1.0, help="divide the logits by T > 0 (default 1)")
    p.add_argument("--top-k", type=int, default=None, help="sample among the k most likely tokens (ties kept)")
    p.add_argument("--top-p", type=float, default=None,
                   help="sample from the smallest set with probability >= p (the token crossing p is kept)")
    p.add_argument("--greedy", action="store_true", help="always take the most likely token")
    p.add_argument("--beams", type=int, default=None, metavar="N", help="beam search with N beams")
    p.add_argument("--length-penalty", type=float, default=1.0,
                   help="beam search: score = sum log p / L^penalty (default 1: per-token average)")
    p.add_argument("--num-samples", type=int, default=1, help="independent samples to draw (default 1)")
    p.add_argument("--no-stop", action="store_true", help="do not stop at the end-of-text token")
    add_common(p)
    p.set_defaults(func=run)


def _end_of_text(tokenizer):
    for name in ("eos_id", "sep_id"):
        i = getattr(tokenizer, name, None)
        if i is not None:
            return i
    return None


def _check_args(args) -> None:
    if args.beams is not None and (args.greedy or args.num_samples != 1):
        raise ConfigError("generate: --beams gives one best continuation; drop --greedy / --num-samples")
    if args.num_samples < 1 or args.max_new_tokens < 0:
        raise ConfigError(f"generate: --num-samples={args.num_samples} must be >= 1 and "
                          f"--max-new-tokens={args.max_new_tokens} >= 0")
    if (args.hf is None) == (args.checkpoint is None):
        raise ConfigError("generate: give one model: a minilm checkpoint CKPT or --hf DIR (a Hugging Face folder)"
                          + (f"; got both {args.checkpoint} and --hf {args.hf}" if args.hf else ""))


def run(args):
    from minilm.checkpoint import load_model
    from minilm.models.gpt import GPT

    _check_args(args)
    if args.hf is not None:
        return run_hf(args)
    model, tokenizer, meta = load_model(args.checkpoint)
    if not isinstance(model, GPT):
        raise MiniLMError(f"generate: {args.checkpoint} holds a {type(model).__name__}; generate continues "
                          "text with a GPT (train one with: minilm train gpt)")
    if tokenizer is None:
        raise MiniLMError(f"generate: {args.checkpoint} has no tokenizer, so the prompt cannot be encoded")
    eos = None if args.no_stop else _end_of_text(tokenizer)
    prompt_ids = list(tokenizer.encode(args.prompt))
    shown = len(prompt_ids)  # how many prompt tokens to show in the text (0: the automatic start)
    if not prompt_ids:  # an empty prompt: start a new document after the end-of-text token
        start = _end_of_text(tokenizer)
        if start is None:
            raise ConfigError("generate: the prompt is empty and the tokenizer has no EOS/[SEP] to start from")
        prompt_ids = [start]
    block = model.config.block_size
    if len(prompt_ids) > block:
        raise ConfigError(f"generate: the prompt is {len(prompt_ids)} tokens long but the model's context "
                          f"(block_size) is {block} tokens; shorten the prompt")
    prompt = np.asarray(prompt_ids, dtype=np.int64)
    rng = np.random.default_rng(args.seed)

    results = []
    if args.beams is not None:
        for score, ids in model.beam_search(prompt, num_beams=args.beams, max_new_tokens=args.max_new_tokens,
                                            eos_id=eos, length_penalty=args.length_penalty):
            results.append({"score": float(score), "ids": ids[len(prompt):].tolist()})
    else:
        out = model.generate(np.tile(prompt, (args.num_samples, 1)), args.max_new_tokens, rng=rng,
                             temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                             greedy=args.greedy, eos_id=eos)
        for row in out:
            new = row[len(prompt):].tolist()
            if eos is not None and eos in new:
                new = new[: new.index(eos) + 1]  # the rows that stopped early are padded with EOS
            results.append({"ids": new})
    for r in results:
        new = [i for i in r["ids"] if i != eos]
        r["completion"] = tokenizer.decode(new)
        r["text"] = tokenizer.decode(prompt_ids[:shown] + new)  # decoded whole: the tokenizer knows the spacing

    if args.json:
        print(json.dumps({"prompt": args.prompt, "prompt_ids": prompt_ids,
                          "completions": results, "decoding": _settings(args)}))
        return 0
    print(f"decoding: {_describe(_settings(args))}", file=sys.stderr)
    for k, r in enumerate(results):
        if len(results) > 1:
            print(f"[beam {k}, score {r['score']:.3f}]" if "score" in r else f"[sample {k}]")
        print(r["text"])
    return 0


def run_hf(args) -> int:
    """``--hf DIR``: the same decoding rules on a Hugging Face GPT-2, T5 or BART folder."""
    from minilm.pretrained.generate import generate_ids, load_for_generate
    if args.beams is not None:
        raise ConfigError("generate --hf: --beams is for minilm checkpoints; use --greedy or sampling "
                          "(--temperature / --top-k / --top-p)")
    gen = load_for_generate(args.hf)
    prompt_ids = gen.prompt_ids(args.prompt)
    rows = generate_ids(gen, prompt_ids, args.max_new_tokens, greedy=args.greedy,
                        rng=np.random.default_rng(args.seed), temperature=args.temperature, top_k=args.top_k,
                        top_p=args.top_p, num_samples=args.num_samples, stop=not args.no_stop)
    tok, results = gen.tokenizer, []
    # the text leaves out EOS, padding and a forced <s>; T5's sentinels <extra_id_N> stay visible
    drop = {i for i in (gen.eos_id, tok.pad_id, getattr(tok, "bos_id", None), gen.start_id) if i is not None}
    for ids in rows:
        text = tok.decode([i for i in ids if i not in drop])
        whole = text if gen.seq2seq else tok.decode(prompt_ids + [i for i in ids if i not in drop])
        results.append({"ids": ids, "completion": text, "text": whole})
    settings = {**_settings(args), "rules": gen.rules}
    if args.json:
        print(json.dumps({"hf": gen.directory, "class": type(gen.model).__name__, "prompt": args.prompt,
                          "prompt_ids": prompt_ids, "completions": results, "decoding": settings}))
        return 0
    rules = "".join(f", {k} {v}" for k, v in gen.rules.items())
    print(f"decoding: {_describe(settings)}{rules}", file=sys.stderr)
    for k, r in enumerate(results):
        if len(results) > 1:
            print(f"[sample {k}]")
        print(r["text"])
    return 0


def _settings(args) -> dict:
    if args.beams is not None:
        return {"method": "beam", "num_beams": args.beams, "length_penalty": args.length_penalty,
                "max_new_tokens": args.max_new_tokens}
    if args.greedy:
        return {"method": "greedy", "max_new_tokens": args.max_new_tokens}
    return {"method": "sample", "temperature": args.temperature, "top_k": args.top_k, "top_p": args.top_p,
            "seed": args.seed, "max_new_tokens": args.max_new_tokens}


def _describe(settings: dict) -> str:
    """The settings as a person reads them: 'sample, temperature 1.0, top-k 50, seed 0, at most 40
    new tokens' (a filter that is off is left out)."""
    method = settings["method"]
    parts = {"beam": ["beam search"], "greedy": ["greedy"]}.get(method, [method])
    if method == "beam":
        parts += [f"{settings['num_beams']} beams", f"length penalty {settings['length_penalty']}"]
    if method == "sample":
        parts.append(f"temperature {settings['temperature']}")
        parts += [f"{name} {settings[key]}" for name, key in (("top-k", "top_k"), ("top-p", "top_p"))
                  if settings[key] is not None]
        parts.append(f"seed {settings['seed']}")
    parts.append(f"at most {settings['max_new_tokens']} new tokens")
    return ", ".join(parts)
