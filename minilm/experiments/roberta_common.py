"""What the two RoBERTa experiments share: ``batch-size`` (Liu et al. 2019, §5, Table 3) and
``data-and-steps`` (§5, Table 4) both pre-train the RoBERTa recipe (minilm/recipes/roberta.py:
FULL-SENTENCES blocks, dynamic masking) at one model size and score it the same way.

Shared here, so that the two tables differ only in what they vary:

* the settings: ``RobertaExperimentConfig``, the recipe's config (blocks, width, vocabulary,
  ``--corpus``, schedule) and the probes' data, which both configs inherit;
* the recipe config of one run (``recipe_config``), pre-trained with ``minilm.train``
  (``pretrain``);
* ``tokens_seen``: the tokens read, counted from the recipe's own epoch schedule;
* the metrics (``scores``): held-out MLM perplexity and accuracy, and the frozen-feature probes on the
  entailment and sentiment tasks of minilm/data/downstream.py — a linear probe of the sentence
  vector [h_<s> ; mean_t h_t] (minilm/experiments/electra_common.py's protocol; chance 1/3 and 1/2).
"""
from __future__ import annotations

import tempfile
import math
from dataclasses import dataclass

import numpy as np

from autograd.errors import ConfigError
from minilm.experiments import Metric, recipe_field
from minilm.recipes.config import override
from minilm.recipes.roberta import RobertaRecipeConfig

__all__ = ["RobertaExperimentConfig", "METRICS", "recipe_config", "pretrain", "eval_documents", "tokens_seen", "probes",
           "sentiment_probe", "scores"]

# The first four columns of both tables (the first two are plotted).
METRICS = (Metric("heldout_ppl", "held-out MLM perplexity", percent=False, higher_is_better=False),
           Metric("entailment_probe", "entailment probe"),
           Metric("heldout_accuracy", "held-out MLM accuracy"),
           Metric("sentiment_probe", "sentiment probe"))


@dataclass(frozen=True)
class RobertaExperimentConfig:
    """What both RoBERTa experiments hold fixed across their rows: the recipe's config (``minilm train
    roberta``: blocks, width, vocabulary, ``--corpus``, schedule) and the probes' data; each
    experiment's config adds what it varies."""
    probe_train: int = 256          # labelled pairs / sentences the probes are fitted on
    probe_test: int = 600           # held-out pairs / sentences the probes are scored on
    recipe: RobertaRecipeConfig = recipe_field(RobertaRecipeConfig())  # minilm train roberta's


def recipe_config(cfg: RobertaExperimentConfig, seed: int, **changes) -> RobertaRecipeConfig:
    """The experiment's recipe config for one run: this ``seed`` and the row's ``changes``."""
    return override(cfg.recipe, seed=seed, **changes)


def pretrain(recipe, schedule) -> None:
    """Train ``recipe`` with ``minilm.train`` on ``schedule`` (a ``TrainConfig``: ``run_schedule``)."""
    from minilm.train import train
    with tempfile.TemporaryDirectory(prefix="minilm-roberta-") as out:
        train(recipe, schedule, out, progress=False, plot=False)


def eval_documents(settings: dict, seed: int, experiment: str) -> tuple[list, list | None]:
    """``(held-out documents, the pool to train from)``: ``eval_docs`` new synthetic documents and
    None, or the last ``eval_docs`` documents of ``--corpus`` and the ones before them."""
    from minilm.data import read_corpus, synthetic_corpus
    n = settings["eval_docs"]
    if not settings["corpus"]:
        return synthetic_corpus(n, rng=np.random.default_rng([seed, 5151])), None
    docs = read_corpus(settings["corpus"])
    if len(docs) < n + 4:
        raise ConfigError(f"{experiment}: {settings['corpus']} has {len(docs)} documents; --eval-docs {n} held out "
                          "leaves fewer than the 4 a run needs")
    return docs[-n:], docs[:-n]


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
