"""Encoder–decoder vs prefix LM vs causal LM on the same text-to-text task, built from the same blocks.

The claim (Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified
Text-to-Text Transformer", §3.2 and Table 2; the three architectures of Fig. 4): with the
denoising objective, the encoder–decoder (L + L layers: 2P parameters, cost M) scores 83.28 on
GLUE, the encoder–decoder whose two stacks share parameters (P, M) 82.81, the prefix LM (one stack
of L layers with the input fully visible: P, M) 81.82, and the plain causal language model (P, M)
74.70. With an LM objective the order is the same (79.56 encoder–decoder, 79.68 prefix LM, 73.78
causal LM). T5 equalised the *compute* (the decoder-only stack runs over input and target
together, so its L layers cost what the encoder's L plus the decoder's L cost); the
encoder–decoder then has twice the parameters.

The miniature equalises the *parameters* instead, and gives the decoder-only models the extra
compute. Every condition uses T5's parts (``minilm.models.t5``: RMSNorm, ReLU feed-forward,
relative position bias, no 1/√d, scaled tied embeddings), so only the architecture differs:

    encoder-decoder   ``minilm.models.t5.T5``: L encoder + L decoder blocks (the decoder's with
                      cross-attention), width C, feed-forward 4C
    prefix LM         one stack of 2L T5 blocks over [input ; target], the input fully visible
                      (Task 9.2's ``prefix_lm_mask``), feed-forward 5C
    causal LM         the same stack, every position causal (``causal_lm_mask``)

2L blocks of (4C² attention + 10C² feed-forward) = L·(4+8)C² + L·(4+4+8)C², so the three have the
same parameters up to one relative-bias table and one RMSNorm (the ``parameters`` column); per
example the decoder-only stacks do about twice the work of the encoder–decoder (2L layers over
S + T tokens against L over S and L over T).

Two reference rows repeat the decoder-only pair with GPT's blocks instead
(``minilm.models.prefixlm.PrefixLM``, the model of ``minilm train prefixlm``: LayerNorm, GELU,
biases, *learned absolute* positions; feed-forward 5C as above): they show how much of the
prefix-vs-causal difference belongs to T5's relative positions rather than to the mask.

The task is a prefixed toy task of ``minilm.data.seq2seq_tasks`` (default ``reverse: d a c`` →
``c a d`` with longer inputs than ``minilm train t5``, so that nobody is at 100%), trained from
scratch with the loss on the target tokens only (teacher forcing), fresh pairs every step. The
metrics are on 200 held-out pairs: **exact match**, the share of greedy decodings equal to the
answer (EOS included), and **token accuracy**, the share of target tokens whose argmax is right
given the true prefix (teacher forcing); ``loss`` is the held-out cross-entropy per target token.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass

import numpy as np

from autograd import nn
from autograd.errors import ConfigError, ShapeError
from minilm.experiments import Metric, Plan
from minilm.recipes import recipe_args  # the recipes' command-line defaults (t5 and prefixlm here)
from minilm.models.t5 import T5Config

NAME = "architectures"
HELP = "T5 Fig. 4 / Table 2: encoder-decoder vs prefix LM vs causal LM at equal parameters"

CONDITIONS = {  # row label -> how run_one builds it
    "encoder-decoder (L+L)": "encdec",
    "prefix LM (2L)": "prefixlm",
    "causal LM (2L)": "causal",
    "prefix LM (2L), GPT blocks": "gpt-prefixlm",
    "causal LM (2L), GPT blocks": "gpt-causal",
}
DEFAULTS = {"task": "reverse", "min_len": 4, "max_len": 12, "n_layer": 2, "n_embd": 64, "n_head": 4,
            "batch_size": 32, "steps": 500, "lr": 3e-3, "warmup": 50}
QUICK = {"min_len": 3, "max_len": 6, "n_layer": 1, "n_embd": 32, "steps": 60}


def add_arguments(p):
    p.add_argument("--task", choices=("copy", "reverse", "sort", "count", "mixed"), default=None,
                   help=f"the toy task (default {DEFAULTS['task']})")
    p.add_argument("--steps", type=int, default=None, help=f"training steps per run (default {DEFAULTS['steps']})")
    p.add_argument("--n-layer", type=int, default=None,
                   help=f"L: encoder and decoder blocks each; the decoder-only stacks get 2L "
                        f"(default {DEFAULTS['n_layer']})")
    p.add_argument("--max-len", type=int, default=None,
                   help=f"longest input in letters (default {DEFAULTS['max_len']})")


# ---- a decoder-only model from T5's parts --------------------------------------------------------

@dataclass
class DecoderOnlyConfig(T5Config):
    """A T5Config for one stack of ``n_layer`` blocks over ``[input ; target]``."""
    arch: str = "prefixlm"   # "prefixlm" (the input fully visible) or "causal"


class T5DecoderOnly(nn.Module):
    """T5's encoder stack (``T5Stack(decoder=False)``: blocks without cross-attention) used as a
    decoder-only LM over ``ids (B, T) = [input ; target ; pad]``: a prefix LM or a causal LM by the
    mask alone (Raffel et al. Fig. 3). Same call as ``minilm.models.prefixlm.PrefixLM``:
    ``model(ids, prefix_len, attention_mask=None, labels=None) -> {"logits" (B, T, V), "loss"}``,
    with labels already shifted (``lm_labels``), and ``generate(prefixes, max_new_tokens, eos_id=)``.
    """

    def __init__(self, config, *, rng: np.random.Generator | None = None):
        super().__init__()
        from minilm.models.t5 import T5, T5Stack
        if config.arch not in ("prefixlm", "causal"):
            raise ConfigError(f"T5DecoderOnly: arch={config.arch!r}, expected 'prefixlm' or 'causal'")
        self.config = config
        rng = np.random.default_rng(config.seed) if rng is None else rng
        self.shared = nn.Embedding(config.vocab_size, config.n_embd, rng=rng, init_std=1.0)
        self.stack = T5Stack(config, rng=rng, decoder=False)      # bidirectional relative buckets
        T5._init_t5_weights(self, rng)                             # T5's init, by parameter name

    def forward(self, ids, prefix_len, attention_mask=None, labels=None) -> dict:
        import autograd.functional as F
        from minilm.blocks import check_token_ids
        from minilm.models.prefixlm import PrefixLM
        cfg = self.config
        ids = check_token_ids("T5DecoderOnly", ids, cfg.vocab_size)            # (B, T)
        B, T = ids.shape
        prefix_len = np.broadcast_to(np.asarray(prefix_len, dtype=np.int64), (B,))
        if ((prefix_len < 0) | (prefix_len > T)).any():
            raise ShapeError(f"T5DecoderOnly: prefix_len {prefix_len.tolist()} must be within [0, T={T}]")
        keys = ids != cfg.pad_id if attention_mask is None else np.asarray(attention_mask).astype(bool)
        mask = PrefixLM.attention_mask(self, T, prefix_len, keys)  # the same masks as PrefixLM: (B|1, 1, T, T)
        h = self.stack(self.shared(ids), mask)                                  # (B, T, C)
        logits = (h * cfg.n_embd ** -0.5) @ self.shared.weight.T              # (B, T, V), tied as in T5
        loss = None if labels is None else F.cross_entropy(logits, np.asarray(labels), ignore_index=-100)
        return {"logits": logits, "loss": loss}

    def generate(self, prefixes, max_new_tokens: int, *, eos_id: int | None = None) -> list[list[int]]:
        """Greedy continuation of each 1-D prefix; the generated ids of each, EOS included when
        produced. Prefixes of one length run as a batch (the whole sequence is re-run each step)."""
        from autograd import no_grad
        from minilm.decoding import generate_tokens
        prefixes = [np.asarray(p, dtype=np.int64).reshape(-1) for p in prefixes]
        out: list = [None] * len(prefixes)
        was_training = self.training
        self.eval()
        try:
            with no_grad():
                for P in sorted({len(p) for p in prefixes}):
                    rows = [i for i, p in enumerate(prefixes) if len(p) == P]
                    ids = np.stack([prefixes[i] for i in rows])                # (b, P)
                    full = generate_tokens(lambda t: self(t, P)["logits"].data[:, -1, :], ids,
                                           max_new_tokens, greedy=True, eos_id=eos_id)
                    for k, i in enumerate(rows):
                        gen = full[k, P:].tolist()
                        out[i] = gen[:gen.index(eos_id) + 1] if eos_id in gen else gen
        finally:
            self.train(was_training)
        return out


# ---- the runs ------------------------------------------------------------------------------------

def make_model(condition: str, settings: dict, *, vocab_size: int, pad_id: int, eos_id: int, seed: int,
               block_size: int = 64):
    """The model of one condition: a ``T5`` of L + L blocks, or a decoder-only stack of 2L blocks
    with feed-forward 5C (equal parameters, see the module docstring): :class:`T5DecoderOnly`, or
    for the "GPT blocks" rows ``minilm.models.prefixlm.PrefixLM`` (learned positions of
    ``block_size``)."""
    from minilm.models.prefixlm import PrefixLM, PrefixLMConfig
    from minilm.models.t5 import T5
    if condition not in CONDITIONS:
        raise ConfigError(f"architectures: unknown condition {condition!r}, expected one of {list(CONDITIONS)}")
    s, kind, rng = settings, CONDITIONS[condition], np.random.default_rng(seed)
    if kind.startswith("gpt-"):
        return PrefixLM(PrefixLMConfig(vocab_size=vocab_size, block_size=block_size, n_layer=2 * s["n_layer"],
                                       n_head=s["n_head"], n_embd=s["n_embd"], n_inner=5 * s["n_embd"],
                                       arch=kind[4:], pad_id=pad_id), rng=rng)
    shape = dict(vocab_size=vocab_size, n_embd=s["n_embd"], n_head=s["n_head"], pad_id=pad_id, eos_id=eos_id)
    if kind == "encdec":
        return T5(T5Config(n_layer=s["n_layer"], **shape), rng=rng)
    config = DecoderOnlyConfig(n_layer=2 * s["n_layer"], n_inner=5 * s["n_embd"], arch=kind, **shape)
    return T5DecoderOnly(config, rng=rng)


def build_recipe(condition: str, seed: int, settings: dict):
    """The recipe of one condition: ``minilm train t5 --task`` for the encoder–decoder, ``minilm
    train prefixlm`` for the decoder-only rows, each with its model swapped for :func:`make_model`'s
    (for the encoder–decoder that is the very T5 the recipe builds)."""
    from minilm.recipes import prefixlm, t5
    if condition not in CONDITIONS:
        raise ConfigError(f"architectures: unknown condition {condition!r}, expected one of {list(CONDITIONS)}")
    s, kind = settings, CONDITIONS[condition]
    common = dict(seed=seed, task=s["task"], min_len=s["min_len"], max_len=s["max_len"], n_head=s["n_head"],
                  n_embd=s["n_embd"], batch_size=s["batch_size"])
    if kind == "encdec":
        recipe = t5.build(recipe_args(t5, n_layer=s["n_layer"], **common))
    else:
        recipe = prefixlm.build(recipe_args(prefixlm, n_layer=2 * s["n_layer"], arch=kind.removeprefix("gpt-"),
                                            **common))
    tok = recipe.tokenizer
    recipe.model = make_model(condition, s, vocab_size=tok.vocab_size, pad_id=tok.pad_id, eos_id=recipe.eos_id,
                              seed=seed, block_size=getattr(recipe.model_config, "block_size", 64))
    recipe.model_config = recipe.model.config
    return recipe


def plan(args, quick: bool) -> Plan:
    settings = dict(DEFAULTS, **(QUICK if quick else {}))
    for key in ("task", "steps", "n_layer", "max_len"):
        value = getattr(args, key, None) if args is not None else None
        if value is not None:
            settings[key] = value
    if settings["steps"] < 1 or settings["n_layer"] < 1 or settings["max_len"] < settings["min_len"]:
        raise ConfigError(f"architectures: steps={settings['steps']}, n_layer={settings['n_layer']}, "
                          f"max_len={settings['max_len']}: expected steps, n_layer >= 1 and "
                          f"max_len >= min_len={settings['min_len']}")
    s = settings
    return Plan(
        title=(f"T5 Fig. 4 in miniature: which architecture learns '{s['task']}' (inputs of "
               f"{s['min_len']}-{s['max_len']} letters) best at equal parameters?"),
        conditions=list(CONDITIONS),
        metrics=[Metric("exact_match", "exact match"), Metric("token_accuracy", "token accuracy"),
                 Metric("loss", "loss / target token", percent=False, higher_is_better=False),
                 Metric("parameters", "parameters", percent=False)],
        settings=settings,
        notes=[f"L = {s['n_layer']}, width {s['n_embd']}, {s['n_head']} heads, T5 blocks in the first three rows; the "
               f"decoder-only stacks have 2L = {2 * s['n_layer']} blocks with feed-forward 5C, so the "
               "parameters match the encoder-decoder's (cross-attention included); they do about twice "
               "its compute per example.",
               "The GPT-block rows: the same decoder-only stacks with LayerNorm, GELU, biases and learned "
               "absolute positions (minilm train prefixlm's model).",
               f"{s['steps']} steps of {s['batch_size']} fresh pairs, AdamW lr {s['lr']}; exact match = "
               "greedy decoding on 200 held-out pairs; token accuracy = teacher-forced argmax.",
               "Paper (T5 Table 2, denoising, GLUE): encoder-decoder 83.28, prefix LM 81.82, "
               "causal LM 74.70 (equal compute; the encoder-decoder has 2x the parameters)."])


def run_one(condition: str, seed: int, settings: dict) -> dict:
    from minilm.train import TrainConfig, train
    recipe = build_recipe(condition, seed, settings)
    cfg = TrainConfig(steps=settings["steps"], lr=settings["lr"], warmup=min(settings["warmup"], settings["steps"]),
                      eval_every=settings["steps"], checkpoint_every=settings["steps"], seed=seed)
    with tempfile.TemporaryDirectory(prefix="minilm-arch-") as out:
        summary = train(recipe, cfg, out, progress=False, plot=False)
    m = summary["metrics"]
    return {"exact_match": m["exact_match"], "token_accuracy": m["token_accuracy"], "loss": m["loss"],
            "parameters": float(summary["parameters"])}
