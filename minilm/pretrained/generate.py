"""Text generation on a loaded Hugging Face checkpoint: ``minilm generate --hf DIR`` for GPT-2, T5 and
BART folders, with the decoding rules of Task 4.2 (``minilm/decoding.py``).

    gen = load_for_generate("t5-small")                    # model, tokenizer, start / eos ids, rules
    ids = generate_ids(gen, gen.prompt_ids("translate English to German: Hello"), 20, greedy=True)
    gen.tokenizer.decode(ids, skip_special_tokens=True)

What transformers' ``generate(do_sample=False, num_beams=1, max_new_tokens=N)`` does, step by step:

* **GPT-2** (decoder only): the prompt's ids, no special tokens added (an empty prompt starts from
  ``bos_token_id``, ``<|endoftext|>``); each step appends the chosen token and runs the model again.
* **T5, BART** (encoder–decoder): the prompt is the *encoder* input, with the tokenizer's special
  tokens (T5: ``text </s>``; BART: ``<s> text </s>``), encoded once; the decoder starts from the
  config's ``decoder_start_token_id`` (T5: ``<pad>`` = 0; BART: ``</s>`` = 2) and grows by one token a step.
* Both stop at ``eos_token_id`` or after N new tokens. Before each choice, the checkpoint's own rules
  from ``generation_config.json`` (else ``config.json``) run, as transformers' logits processors do
  (``transformers/generation/logits_process.py``), in their order:

  - ``repetition_penalty`` p (``RepetitionPenaltyLogitsProcessor``; Keskar et al. 2019, CTRL): every
    token already in the sequence so far — for GPT-2 the prompt included, for T5 / BART the decoder's
    ids including its start token, never the encoder's — has its score s replaced by s·p if s < 0,
    else s/p, once however often it occurs (p > 1 discourages repeats, p < 1 favours them);
  - ``no_repeat_ngram_size`` (a token that would repeat an n-gram of the sequence so far is banned);
  - ``min_length`` (``MinLengthLogitsProcessor``): EOS is banned while the sequence is shorter than
    it — GPT-2's prompt + new tokens, the decoder's start token + new tokens for T5 / BART;
    ``min_new_tokens`` (``MinNewTokensLengthLogitsProcessor``): EOS is banned until that many new
    tokens exist. When the file sets ``min_new_tokens``, transformers replaces ``min_length`` by
    ``min_new_tokens`` + the input's length, so ``min_length`` is then not applied;
  - ``forced_bos_token_id`` (the first generated token, when the sequence is one token long) and
    ``forced_eos_token_id`` (the N-th new token).

  Any other rule the file sets to a value that changes the tokens (:data:`UNSUPPORTED`:
  ``encoder_repetition_penalty``, ``bad_words_ids``, ``suppress_tokens``, ...), and an ``eos_token_id``
  list of several ids (transformers stops at any of them, minilm at one), is a CheckpointError naming
  the rule and the file, never a warning followed by other tokens. ``renormalize_logits`` and
  ``remove_invalid_values`` change no choice and are accepted; the file's decoding strategy
  (``do_sample``, ``num_beams``, ``temperature``, ``top_k``, ...) is the command line's to choose.

The loop is ``minilm.decoding.generate_tokens`` (the rules run as its ``process`` hook) and the
choice Task 4.2's: ``greedy`` (argmax; ties to the lowest id, as ``torch.argmax``) or
``minilm.decoding.sample_next`` (temperature → top-k → top-p → ``sample_token``, with ``rng``).
transformers' sampling defaults to top-k 50; here every filter is off unless asked for.

No key/value cache: every step re-runs the decoder (or GPT-2) on the whole sequence so far, which
gives the same numbers and is cheap at these sizes. Letters: B rows, t length so far, V vocabulary.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from autograd import no_grad
from autograd.errors import CheckpointError, ConfigError
from minilm import decoding
from minilm.models.bart import Bart
from minilm.models.gpt import GPT
from minilm.models.t5 import T5

from .auto import load_pretrained
from .files import CONFIG, read_config

__all__ = ["HFGeneration", "load_for_generate", "generate_ids", "apply_rules", "ban_repeated_ngrams",
           "penalize_repeats", "RULES", "UNSUPPORTED"]

# the rules applied, each with the value that turns it off (a forced id: absent)
RULES = {"repetition_penalty": 1.0, "no_repeat_ngram_size": 0, "min_length": 0, "min_new_tokens": 0,
         "forced_bos_token_id": None, "forced_eos_token_id": None}
# generation_config fields whose other values make transformers' generate choose other tokens, which
# minilm does not apply: refused, with the value that turns each off
UNSUPPORTED = {"encoder_repetition_penalty": 1.0, "encoder_no_repeat_ngram_size": 0, "bad_words_ids": None,
               "suppress_tokens": None, "begin_suppress_tokens": None, "sequence_bias": None,
               "exponential_decay_length_penalty": None, "guidance_scale": 1.0, "watermarking_config": None,
               "stop_strings": None, "token_healing": False}


@dataclass
class HFGeneration:
    """A loaded checkpoint ready to generate: ``seq2seq`` for T5 / BART; ``start_id`` is the
    decoder's first token (seq2seq) or the start of an empty prompt (GPT-2); ``rules`` the
    generation rules applied (see the module docstring)."""
    model: object
    tokenizer: object
    directory: str
    seq2seq: bool
    start_id: int | None
    eos_id: int | None
    rules: dict = field(default_factory=dict)

    def prompt_ids(self, text: str) -> list[int]:
        """The model's input for ``text``: the encoder input with special tokens (seq2seq), the plain
        ids otherwise (transformers' ``tokenizer(text)`` adds none for GPT-2)."""
        return list(self.tokenizer.encode(text, add_special_tokens=self.seq2seq))

    @property
    def block_size(self) -> int | None:
        return self.model.config.block_size if isinstance(self.model, GPT) else None


def _settings(directory: Path) -> tuple[dict, dict, Path]:
    """``(ids, rules, rules' file)``: where transformers' ``generate`` reads the special ids
    (generation_config.json over config.json) and the generation rules (generation_config.json alone
    when it exists — then config.json's rules are ignored, as transformers 5 does — else config.json)."""
    config = dict(read_config(directory))
    path = directory / "generation_config.json"
    if not path.is_file():
        return config, config, directory / CONFIG
    try:
        generation = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path}: not valid JSON ({e})") from None
    return {**config, **{k: v for k, v in generation.items() if v is not None}}, generation, path


def _is_off(value, off) -> bool:
    return value is None or value == off or (isinstance(value, (list, dict)) and not value)


def _rules(r: dict, path: Path, eos: list) -> dict:
    """The rules of :data:`RULES` that ``r`` turns on, checked; a CheckpointError for any of
    :data:`UNSUPPORTED` that it turns on, and for several EOS ids."""
    on = sorted(k for k, off in UNSUPPORTED.items() if not _is_off(r.get(k), off))
    if on:
        raise CheckpointError(f"{path}: sets {', '.join(f'{k}={r[k]!r}' for k in on)}, which transformers' generate "
                              f"applies and minilm does not (minilm applies {', '.join(RULES)}); remove "
                              f"{'it' if len(on) == 1 else 'them'} from the file to generate without")
    if len(set(eos)) > 1:
        raise CheckpointError(f"{path}: eos_token_id lists {eos}; transformers stops at any of them, minilm at one")
    rules = {k: r[k] for k, off in RULES.items() if not _is_off(r.get(k), off)}
    if r.get("min_new_tokens") is not None:     # transformers: min_length := min_new_tokens + input length
        rules.pop("min_length", None)
    for key, value in rules.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if key == "repetition_penalty" and not (number and value > 0):
            raise CheckpointError(f"{path}: repetition_penalty={value!r}, expected a number > 0")
        if key in ("no_repeat_ngram_size", "min_length", "min_new_tokens") and not (
                isinstance(value, int) and not isinstance(value, bool) and value > 0):
            raise CheckpointError(f"{path}: {key}={value!r}, expected a whole number >= 0")
    return rules


def _token_ids(settings: dict, key: str) -> list[int]:
    v = settings.get(key)
    return [int(i) for i in (v if isinstance(v, list) else [] if v is None else [v])]


def _token_id(settings: dict, key: str) -> int | None:
    ids = _token_ids(settings, key)     # a list of eos ids: the first (several are refused by _rules)
    return ids[0] if ids else None


def load_for_generate(directory) -> HFGeneration:
    """``load_pretrained(directory)`` for a GPT-2, T5 or BART folder, with the ids and rules that
    transformers' ``generate`` reads from its config files. Any other family is a ConfigError."""
    directory = Path(directory)
    model, tok = load_pretrained(directory)
    if not isinstance(model, (GPT, T5, Bart)):
        raise ConfigError(f"generate --hf: {directory} holds a {type(model).__name__} "
                          f"(model_type {read_config(directory).get('model_type')!r}); generate needs a "
                          "decoder: gpt2 (GPT2LMHeadModel), t5 or bart (…ForConditionalGeneration)")
    if tok is None:
        raise CheckpointError(f"generate --hf: {directory} has no tokenizer file minilm reads (tokenizer.json, "
                              "or vocab.json + merges.txt), so the prompt cannot be encoded")
    s, r, path = _settings(directory)
    rules = _rules(r, path, _token_ids(s, "eos_token_id"))
    seq2seq = not isinstance(model, GPT)
    start = _token_id(s, "decoder_start_token_id" if seq2seq else "bos_token_id")
    if seq2seq and start is None:
        raise CheckpointError(f"generate --hf: {directory / CONFIG} has no decoder_start_token_id")
    return HFGeneration(model, tok, str(directory), seq2seq, start, _token_id(s, "eos_token_id"), rules)


def ban_repeated_ngrams(seqs: np.ndarray, logits: np.ndarray, n: int) -> np.ndarray:
    """transformers' ``no_repeat_ngram_size``: in each row, −inf for every token that would complete
    an n-gram already present in ``seqs`` (B, t). Changes ``logits`` (B, V) in place and returns it."""
    t = seqs.shape[1]
    if n < 1 or t + 1 < n:
        return logits
    for b, row in enumerate(seqs.tolist()):
        prefix = row[t - n + 1:] if n > 1 else []
        for i in range(t - n + 1):
            if row[i:i + n - 1] == prefix:
                logits[b, row[i + n - 1]] = -np.inf
    return logits


def penalize_repeats(seqs: np.ndarray, logits: np.ndarray, penalty: float) -> np.ndarray:
    """transformers' ``RepetitionPenaltyLogitsProcessor``: in each row, the score s of every token
    present in ``seqs`` (B, t) becomes s·p if s < 0, else s/p — once per token, in the scores' own
    dtype (as torch computes it). Changes ``logits`` (B, V) in place and returns it."""
    V = logits.shape[1]
    p = logits.dtype.type(penalty)
    for b, row in enumerate(seqs):
        ids = np.unique(row[row < V])              # transformers drops ids beyond the scores
        s = logits[b, ids]
        logits[b, ids] = np.where(s < 0, s * p, s / p)
    return logits


def _force(logits: np.ndarray, token: int) -> np.ndarray:
    logits[:] = -np.inf
    logits[:, token] = 0.0
    return logits


def apply_rules(logits, seqs, step: int, max_new_tokens: int, rules: dict, eos_id: int | None = None) -> np.ndarray:
    """The checkpoint's generation rules on the scores (B, V) of step ``step`` (0-based: the new
    tokens so far) after ``seqs`` (B, t), in transformers' order: repetition penalty, no repeated
    n-gram, EOS banned below ``min_length`` (t) or ``min_new_tokens`` (step) — with ``eos_id``, as
    transformers needs an EOS for them —, forced BOS (t = 1), forced EOS (the last allowed step).
    Returns a new float64 array."""
    logits = np.asarray(logits)
    logits = logits.astype(np.result_type(logits, np.float32))   # a copy, in the model's dtype for the penalty
    if rules.get("repetition_penalty"):
        penalize_repeats(seqs, logits, float(rules["repetition_penalty"]))
    logits = logits.astype(np.float64)
    if rules.get("no_repeat_ngram_size"):
        ban_repeated_ngrams(seqs, logits, int(rules["no_repeat_ngram_size"]))
    short = seqs.shape[1] < rules.get("min_length", 0) or step < rules.get("min_new_tokens", 0)
    if eos_id is not None and short:
        logits[:, eos_id] = -np.inf
    if rules.get("forced_bos_token_id") is not None and seqs.shape[1] == 1:
        _force(logits, int(rules["forced_bos_token_id"]))
    if rules.get("forced_eos_token_id") is not None and step == max_new_tokens - 1:
        eos = rules["forced_eos_token_id"]
        _force(logits, int(eos[0] if isinstance(eos, list) else eos))
    return logits


def _next_logits(gen: HFGeneration, prompt: list[int], B: int):
    """``(first sequences (B, t0), fn(seqs) -> scores (B, V))`` for the model's kind."""
    model = gen.model
    if not gen.seq2seq:              # generate_tokens crops the input to the last block_size tokens
        return np.tile(np.asarray(prompt, dtype=np.int64), (B, 1)), \
            lambda seqs: model(seqs)[0].data[:, -1, :]                                # (B, V)
    src = np.tile(np.asarray(prompt, dtype=np.int64), (B, 1))                          # (B, S)
    src_mask = np.ones_like(src)
    enc = model.encode(src, src_mask)                                                  # (B, S, C)
    return np.full((B, 1), gen.start_id, dtype=np.int64), \
        lambda seqs: model.decode(seqs, enc, src_mask).data[:, -1, :]                 # (B, V)


def generate_ids(gen: HFGeneration, prompt: list[int], max_new_tokens: int, *, greedy: bool = False, rng=None,
                 temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                 num_samples: int = 1, stop: bool = True) -> list[list[int]]:
    """The new tokens of ``num_samples`` continuations of ``prompt`` (ids from :meth:`HFGeneration.prompt_ids`),
    each up to and including EOS (``stop=False``: ignore EOS). Greedy, or sampled with ``rng``."""
    if max_new_tokens < 0 or num_samples < 1:
        raise ConfigError(f"generate --hf: max_new_tokens={max_new_tokens} must be >= 0 and "
                          f"num_samples={num_samples} >= 1")
    if not greedy and rng is None:
        raise ConfigError("generate --hf: sampling needs rng= (a numpy.random.Generator); or pass greedy=True")
    if not prompt:
        if gen.seq2seq or gen.start_id is None:
            raise ConfigError("generate --hf: the prompt gives no tokens" +
                              ("" if gen.seq2seq else " and the config has no bos_token_id to start from"))
        prompt = [gen.start_id]
    if gen.block_size is not None and len(prompt) > gen.block_size:
        raise ConfigError(f"generate --hf: the prompt is {len(prompt)} tokens long but the model's context "
                          f"(n_positions) is {gen.block_size}; shorten the prompt")
    eos = gen.eos_id if stop else None
    gen.model.eval()
    with no_grad():
        seqs, next_logits = _next_logits(gen, prompt, num_samples)
        t0 = seqs.shape[1]
        seqs = decoding.generate_tokens(
            next_logits, seqs, max_new_tokens, rng=rng, temperature=temperature, top_k=top_k, top_p=top_p,
            greedy=greedy, eos_id=eos, context=gen.block_size,
            process=lambda logits, ids, step: apply_rules(logits, ids, step, max_new_tokens, gen.rules, gen.eos_id))
    out = []
    for row in seqs[:, t0:].tolist():           # a row that stopped early repeats EOS: cut after the first
        out.append(row[:row.index(eos) + 1] if eos is not None and eos in row else row)
    return out
