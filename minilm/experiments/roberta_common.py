"""What the two RoBERTa experiments share: ``batch-size`` (Liu et al. 2019, §5, Table 3) and
``data-and-steps`` (§5, Table 4) both pre-train the RoBERTa recipe (minilm/recipes/roberta.py:
FULL-SENTENCES blocks, dynamic masking) at one model size and score it the same way.

Shared here, so that the two tables differ only in what they vary:

* the sizes: ``RobertaExperimentConfig``, the fields both configs inherit (blocks, width,
  vocabulary, the probes' data, ``--corpus``);
* the recipe built from them (``recipe_config``) and pre-trained with ``minilm.train``
  (``pretrain``);
* ``tokens_seen``: the tokens read, counted from the recipe's own epoch schedule;
* the metrics (``scores``): held-out MLM perplexity and accuracy, and the frozen-feature probes on the
  entailment and sentiment tasks of minilm/data/downstream.py — a linear probe of the sentence
  vector [h_<s> ; mean_t h_t] (minilm/experiments/electra_common.py's protocol; chance 1/3 and 1/2).
"""
from __future__ import annotations

import tempfile
import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from minilm.experiments import Metric
from minilm.recipes.config import override

__all__ = ["RobertaExperimentConfig", "METRICS", "recipe_config", "pretrain", "tokens_seen", "probes",
           "sentiment_probe", "scores"]

# The first four columns of both tables (the first two are plotted).
METRICS = (Metric("heldout_ppl", "held-out MLM perplexity", percent=False, higher_is_better=False),
           Metric("entailment_probe", "entailment probe"),
           Metric("heldout_accuracy", "held-out MLM accuracy"),
           Metric("sentiment_probe", "sentiment probe"))


@dataclass(frozen=True)
class RobertaExperimentConfig:
    """The sizes and the text both RoBERTa experiments hold fixed across their rows; each
    experiment's config adds what it varies."""
    tokens_per_sample: int = 64     # tokens per block
    n_layer: int = 2                # RoBERTa blocks
    n_head: int = 4                 # attention heads
    n_embd: int = 64                # width
    vocab_size: int = 600           # byte-level BPE vocabulary
    probe_train: int = 256          # labelled pairs / sentences the probes are fitted on
    probe_test: int = 600           # held-out pairs / sentences the probes are scored on
    corpus: Optional[str] = None    # "real": the English text minilm ships (Jargon File 4.4.7, 1.3 MB,
                                    # minilm/data/real/); or a UTF-8 text file (or .gz): documents separated by
                                    # blank lines, one sentence per line (default: the synthetic corpus)


def recipe_config(settings: dict, seed: int, **changes):
    """The RoBERTa recipe's defaults with the experiment's sizes (and ``changes``)."""
    from minilm.recipes import roberta
    keys = ("corpus", "docs", "tokens_per_sample", "n_layer", "n_head", "n_embd", "vocab_size")
    return override(roberta.RobertaRecipeConfig(), seed=seed, **{**{k: settings[k] for k in keys if k in settings}, **changes})


def pretrain(recipe, steps: int, lr: float, warmup: int, seed: int) -> None:
    from minilm.train import TrainConfig, train
    cfg = TrainConfig(steps=steps, lr=lr, warmup=warmup, eval_every=steps, checkpoint_every=steps, seed=seed)
    with tempfile.TemporaryDirectory(prefix="minilm-roberta-") as out:
        train(recipe, cfg, out, progress=False, plot=False)


def tokens_seen(recipe, steps: int) -> int:
    """Tokens in the blocks ``recipe`` serves over ``steps`` steps (its own epoch schedule)."""
    lengths = np.array([len(b) for b in recipe.train_blocks])
    return int(sum(lengths[i] for s in range(steps) for _, i in recipe.epoch_schedule(s)))


def sentiment_probe(encode, tokenizer, seed: int, settings: dict) -> float:
    """Probe accuracy of a frozen ``encode`` on the sentiment task (``<s> sentence </s>``); the
    sentences come from another stream than the ones the recipe's tokenizer was trained on."""
    from minilm.data import pad_batch, sentiment_dataset
    from minilm.downstream.probe import probe_accuracy
    from minilm.experiments.electra_common import sentence_features
    rng = np.random.default_rng([seed, 78])

    def arrays(n):
        examples = sentiment_dataset(n, rng=rng)
        ids, mask = pad_batch([tokenizer.encode(e.text, add_special_tokens=True) for e in examples], tokenizer.pad_id)
        return sentence_features(encode, ids, mask), np.array([e.label for e in examples])
    return probe_accuracy(*arrays(settings["probe_train"]), *arrays(settings["probe_test"]))


def probes(model, tokenizer, seed: int, settings: dict) -> dict:
    """The two frozen-feature probes of a trained RoBERTa (same examples for every row of a seed)."""
    from minilm.experiments.electra_common import entailment_probe
    model.eval()
    return {"entailment_probe": entailment_probe(model.encode, tokenizer, seed, settings),
            "sentiment_probe": sentiment_probe(model.encode, tokenizer, seed, settings)}


def scores(recipe, heldout_loss: float, heldout_accuracy: float, seed: int, settings: dict) -> dict:
    """The columns of :data:`METRICS` (and the held-out loss) for a pre-trained ``recipe``: perplexity
    = exp(mean cross-entropy per masked token), as RoBERTa's Table 3 reports it, then the probes."""
    return {"heldout_ppl": math.exp(heldout_loss), "heldout_loss": heldout_loss, "heldout_accuracy": heldout_accuracy,
            **probes(recipe.model, recipe.tokenizer, seed, settings)}
