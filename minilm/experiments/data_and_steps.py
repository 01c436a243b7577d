"""More data and more steps (RoBERTa, Liu et al. 2019, §5 and Table 4).

With the model, the batch (8K sequences) and the recipe fixed, RoBERTa-large was trained on more
text and for longer (Table 4, dev sets: SQuAD v1.1 / v2.0 F1, MNLI-m, SST-2):

    BOOKS + WIKI (16GB),     100K steps    93.6 / 87.3   89.0   95.3
    + additional data (160GB), 100K steps  94.0 / 87.7   89.3   95.6
    + pretrain longer,         300K steps  94.4 / 88.7   90.0   96.1
    + pretrain even longer,    500K steps  94.6 / 89.4   90.2   96.4

(BERT-large, 13GB, 256 × 1M steps: 90.9 / 81.8, 86.6, 93.7.) Both help, and the longest run still
had not overfit ("even our longest-trained model does not appear to overfit our data").

The miniature: the RoBERTa recipe (minilm/recipes/roberta.py: FULL-SENTENCES blocks of 64 tokens,
dynamic masking, batch 32) on a small grid of corpus size × steps, --small-docs or --large-docs
documents (90% trained on, as the recipe splits them) for --steps or 2 × --steps steps, plus one
longer run of the large corpus (4 × --steps). With --corpus FILE the last --eval-docs documents of
the file are held out and a row with N documents trains on the first N of the others.

Held equal: the model, the batch, the peak learning rate and the warm-up, the training loop, and
the held-out documents (the same new documents for every row of a seed: --eval-docs synthetic
documents from a stream of their own, or the end of --corpus). What varies, per row, in the
table: the distinct training documents, the tokens read (counted from the recipe's own batch
schedule) and how many times each block was read (epochs). Every row's tokenizer is trained on its
own training text, as the recipe does; the number of tokens it cuts the held-out documents into is
the table's last column: rows with the same corpus compare exactly, rows with different corpora
only roughly (a smaller corpus's tokenizer cuts finer, and finer pieces are likely easier to predict).

Metrics: held-out MLM perplexity and accuracy on the new documents (--eval-masks masks per block,
drawn with the recipe's 80/10/10 masker), and the frozen-feature probes on the entailment and
sentiment tasks of minilm/data/downstream.py (minilm/experiments/electra_common.py's protocol).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import numpy as np

from autograd.errors import ConfigError
from minilm.experiments import Metric, Plan, config_of, recipe_field, run_schedule, settings_of
from minilm.experiments.claims import Beats, BestOf
from minilm.experiments.roberta_common import METRICS, RobertaExperimentConfig
from minilm.recipes.config import override
from minilm.recipes.roberta import RobertaRecipeConfig

NAME = "data-and-steps"
HELP = "RoBERTa with more data and more steps: a corpus size × steps grid at a fixed model and batch"


@dataclass(frozen=True)
class DataAndStepsConfig(RobertaExperimentConfig):
    """``minilm experiment data-and-steps``: corpus size × steps at one model and batch (the recipe and
    the probes: ``RobertaExperimentConfig``; the recipe's ``--steps`` are the short runs'). ``quick()``:
    toy sizes."""
    small_docs: int = 200           # documents of the small corpus
    large_docs: int = 800           # documents of the large corpus
    eval_docs: int = 100            # new documents for the held-out metrics
    eval_masks: int = 2             # masks drawn per held-out block
    recipe: RobertaRecipeConfig = recipe_field(RobertaRecipeConfig(), set_by_rows=("docs",), steps=100,
                                               warmup=30)  # minilm train roberta's; the long runs: 2×, 4× the steps

    @classmethod
    def quick(cls):
        return override(cls(), small_docs=20, large_docs=60, steps=15, eval_docs=20, warmup=3, n_layer=1, n_head=2,
                        n_embd=32, probe_train=64, probe_test=150)


CONFIG = DataAndStepsConfig
OPTIONS = ("corpus", "small_docs", "large_docs", "steps", "eval_docs")


def grid(settings: dict) -> dict:
    """condition -> (documents, steps): the 2 × 2 grid and one longer run of the large corpus."""
    small, large, S = settings["small_docs"], settings["large_docs"], settings["steps"]
    if not 4 <= small < large:
        raise ConfigError(f"{NAME}: --small-docs {small} and --large-docs {large}: expected 4 <= small < large")
    if S < 1:
        raise ConfigError(f"{NAME}: --steps {S}: expected at least 1")
    return {f"{n} docs × {s} steps": (n, s) for n, s in
            ((small, S), (small, 2 * S), (large, S), (large, 2 * S), (large, 4 * S))}


def claims(rows: dict) -> list:
    """Table 4's findings on this grid: more data helps, more steps help, the longest run is best."""
    (small_S, small_2S, large_S, large_2S, large_4S) = rows
    ppl = {"higher_is_better": False, "percent": False}
    return [
        BestOf("The longest run on the most data is the best, and still not overfitting (Liu et al. 2019, Table 4: "
               "500K steps best, MNLI-m 90.2); read here on held-out MLM perplexity.", "heldout_ppl",
               winners=(large_4S,), among=tuple(rows), **ppl),
        Beats("More data helps at the same steps (Table 4: 16GB → 160GB, MNLI-m 89.0 → 89.3).", "heldout_ppl",
              above=(large_2S,), below=(small_2S,), **ppl),
        Beats("More steps help on the same data (Table 4: 100K → 300K steps, MNLI-m 89.3 → 90.0).", "heldout_ppl",
              above=(large_2S,), below=(large_S,), **ppl),
    ]


def plan(cfg: DataAndStepsConfig) -> Plan:
    settings = settings_of(cfg)
    rows = grid(settings)
    return Plan(
        title="more data, more steps: a corpus size × steps grid at a fixed model and batch",
        conditions=list(rows),
        metrics=[*METRICS,
                 Metric("train_docs", "training docs", percent=False),
                 Metric("tokens_seen", "tokens read", percent=False),
                 Metric("epochs", "epochs", percent=False),
                 Metric("heldout_tokens", "held-out tokens", percent=False)],
        settings=settings,
        notes=[f"Held equal: the model, batch {settings['batch_size']}, peak lr {settings['lr']:g}, "
               f"warm-up {settings['warmup']} steps, and the held-out documents ({settings['eval_docs']} new ones "
               "per seed). Varying, per row: training documents, tokens read (counted from the recipe's batch "
               "schedule), epochs.",
               "Each row's tokenizer is trained on its own training text (as the recipe does): a smaller corpus "
               "learns fewer whole words and cuts the same held-out documents into more tokens (the last "
               "column), so perplexity and accuracy per token compare exactly across steps, and only roughly "
               "across corpus sizes (finer pieces of a word are likely easier to predict, which would favour "
               "the small corpus).",
               "Liu et al. 2019, Table 4 (RoBERTa-large, batch 8K; SQuAD 1.1/2.0, MNLI-m, SST-2, all dev): "
               "BOOKS+WIKI 100K "
               "steps 93.6/87.3, 89.0, 95.3; +additional data (160GB) 94.0/87.7, 89.3, 95.6; 300K steps "
               "94.4/88.7, 90.0, 96.1; 500K steps 94.6/89.4, 90.2, 96.4."],
        claims=claims(rows))


def heldout_pairs(recipe, docs, settings: dict, seed: int) -> list:
    """``eval_masks`` masked copies of the RoBERTa blocks of ``docs`` (the recipe's tokenizer, packing
    and masker)."""
    from minilm.data import encode_documents, roberta_blocks
    from minilm.experiments.masking import masked_pairs
    tok = recipe.tokenizer
    blocks = [np.asarray(b, dtype=np.int64) for b in roberta_blocks(
        encode_documents(docs, tok.encode), settings["tokens_per_sample"], bos_id=tok.bos_id, sep_id=tok.eos_id)]
    return [p for c in range(settings["eval_masks"])
            for p in masked_pairs(blocks, recipe.masker, seed_prefix=[seed, 98, c])]


def run_one(condition: str, seed: int, settings: dict) -> dict:
    from minilm.data import write_corpus
    from minilm.experiments.roberta_common import eval_documents, pretrain, recipe_config, scores, tokens_seen
    from minilm.experiments.masking import mlm_scores
    from minilm.recipes import roberta
    from minilm.recipes.common import load_documents
    rows = grid(settings)
    if condition not in rows:
        raise ValueError(f"{NAME}: unknown condition {condition!r}; expected one of {list(rows)}")
    n_docs, steps = rows[condition]
    held_docs, pool = eval_documents(settings, seed, NAME)
    with tempfile.TemporaryDirectory(prefix="minilm-data-") as tmp:
        corpus = None
        if pool is not None:                   # the first n_docs of the corpus before the held-out end
            corpus = os.path.join(tmp, "corpus.txt")
            write_corpus(pool[:n_docs], corpus)
        cfg = recipe_config(config_of(CONFIG, settings), seed, corpus=corpus, docs=n_docs, steps=steps)
        train_docs = len(load_documents(cfg)[0])
        recipe = roberta.RobertaRecipe(cfg)
    pairs = heldout_pairs(recipe, held_docs, settings, seed)
    seen = tokens_seen(recipe, steps)
    pretrain(recipe, run_schedule(cfg, seed))
    held = mlm_scores(recipe.model, pairs, recipe.tokenizer.pad_id)
    return {**scores(recipe, held["loss"], held["accuracy"], seed, settings), "train_docs": train_docs,
            "tokens_seen": seen, "epochs": steps * settings["batch_size"] / len(recipe.train_blocks),
            "heldout_tokens": sum(int((t != recipe.tokenizer.pad_id).sum()) for t in
                                  (p[0] for p in pairs[:len(pairs) // settings["eval_masks"]]))}
