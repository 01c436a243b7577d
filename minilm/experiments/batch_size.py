"""Large batches at equal compute (RoBERTa, Liu et al. 2019, §4.3 "Training with large batches", Table 3).

BERT-base was trained for 1M steps of 256 sequences. RoBERTa asks whether the same number of
sequences seen, in fewer and larger steps, trains as well: BERT-base on BOOKS + WIKI, each batch
size with its own tuned peak learning rate (Table 3: held-out MLM perplexity / MNLI-m / SST-2 dev):

    batch 256 × 1M steps,   lr 1e-4    perplexity 3.99   MNLI-m 84.7   SST-2 92.7
    batch 2K  × 125K steps, lr 7e-4    perplexity 3.68   MNLI-m 85.2   SST-2 92.9
    batch 8K  × 31K steps,  lr 1e-3    perplexity 3.77   MNLI-m 84.6   SST-2 92.8

so 2K is slightly better than 256 and 8K close to it; RoBERTa went on with 8K (large batches are
also easier to spread over machines).

The miniature: the RoBERTa recipe (minilm/recipes/roberta.py: FULL-SENTENCES blocks of 64 tokens,
dynamic masking) on --docs synthetic documents (or --corpus FILE), with --batch-sizes, each for
``steps × ref_batch / batch`` steps, so every run reads the same number of blocks. Each batch size
gets its own peak learning rate by one stated rule, square-root scaling from the reference batch:
lr(B) = lr × sqrt(B / ref_batch) (the paper tuned each by hand; its 1e-4 → 7e-4 → 1e-3 grows a
little faster than sqrt from 256 to 2K and slower from 2K to 8K). The warm-up is the same share of
each run (warmup_share of its steps); the schedule otherwise is the recipe's (AdamW, cosine decay).

Held equal: the sequences (blocks) read, batch × steps, identical for every row (checked in plan());
the tokens read, counted from the recipe's own batch schedule in every run (the table's column;
run_one raises if a run's count is off from blocks × mean block length by more than 2%); the model,
the data, the tokenizer and the evaluation. What differs: the number of optimizer updates.

Metrics, on the recipe's held-out documents (never trained on; one fixed mask each):
  held-out MLM perplexity    exp(mean cross-entropy per masked token), as Table 3 reports it;
  held-out MLM accuracy      masked tokens predicted right;
  entailment / sentiment probe   a linear probe of the frozen encoder's sentence vectors
                             [h_<s> ; mean_t h_t] on the two tasks of minilm/data/downstream.py
                             (minilm/experiments/electra_common.py's protocol; chance 1/3 and 1/2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from autograd import no_grad
from autograd.errors import ConfigError
from minilm.experiments import Metric, Plan, config_of, recipe_field, run_schedule, settings_of
from minilm.experiments.claims import Beats
from minilm.experiments.roberta_common import (METRICS, RobertaExperimentConfig, pretrain, recipe_config, scores,
                                               tokens_seen)
from minilm.recipes.config import override
from minilm.recipes.roberta import RobertaRecipeConfig

NAME = "batch-size"
HELP = "RoBERTa's batch size at equal compute: small batches for many steps vs large batches for few"

TOKEN_TOLERANCE = 0.02    # a run's tokens read may differ from blocks × mean block length by this much


@dataclass(frozen=True)
class BatchSizeConfig(RobertaExperimentConfig):
    """``minilm experiment batch-size``: the same blocks read in batches of different sizes (the recipe
    and the probes: ``RobertaExperimentConfig``). The recipe's ``--steps`` and ``--lr`` are those of
    ``ref_batch``; each row sets its batch, steps, learning rate and warm-up. ``quick()``: toy sizes."""
    batch_sizes: str = "8,32,128"   # the batch sizes compared, comma-separated
    ref_batch: int = 32             # the batch that trains for --steps steps at --lr; batch B trains
                                    # steps × ref_batch / B steps at lr × sqrt(B / ref_batch)
    warmup_share: float = 0.1       # warm-up steps as a share of each run's steps
    recipe: RobertaRecipeConfig = recipe_field(RobertaRecipeConfig(), set_by_rows=("batch_size", "warmup"),
                                               docs=800, steps=160)  # minilm train roberta's

    @classmethod
    def quick(cls):
        return override(cls(), docs=80, steps=40, n_head=2, n_embd=32, probe_train=64, probe_test=150)


CONFIG = BatchSizeConfig
OPTIONS = ("corpus", "docs", "batch_sizes", "steps", "lr")


def batch_sizes(settings: dict) -> list[int]:
    try:
        sizes = [int(b) for b in str(settings["batch_sizes"]).split(",") if b.strip()]
    except ValueError:
        raise ConfigError(f"{NAME}: --batch-sizes {settings['batch_sizes']!r}: expected integers such as 8,32,128") \
            from None
    if not sizes or min(sizes) < 1:
        raise ConfigError(f"{NAME}: --batch-sizes {settings['batch_sizes']!r}: expected batch sizes >= 1")
    return sizes


def schedules(settings: dict) -> dict:
    """condition -> (batch, steps, lr, warm-up) for every batch size; raises ConfigError unless every
    row reads exactly steps × ref_batch blocks."""
    budget = settings["steps"] * settings["ref_batch"]           # blocks every run reads
    out = {}
    for B in batch_sizes(settings):
        if budget % B:
            raise ConfigError(f"{NAME}: steps × ref_batch = {settings['steps']} × {settings['ref_batch']} = {budget} "
                              f"blocks is not a whole number of batches of {B}: equal compute needs a divisor")
        steps = budget // B
        lr = settings["lr"] * math.sqrt(B / settings["ref_batch"])
        out[f"batch {B} × {steps} steps"] = (B, steps, lr, max(1, round(settings["warmup_share"] * steps)))
    reads = {c: B * s for c, (B, s, _, _) in out.items()}
    if len(set(reads.values())) != 1:                            # the equal-compute check itself
        raise ConfigError(f"{NAME}: the rows read different numbers of blocks: {reads}")
    return out


def claims(rows: dict) -> list:
    """Table 3's finding on these rows: at equal sequences read, the 8× larger batch (each batch with its own
    learning rate) trains to a lower held-out perplexity than the smallest."""
    by_batch = sorted(rows, key=lambda c: rows[c][0])
    small = by_batch[0]
    larger = [c for c in by_batch if rows[c][0] >= 8 * rows[small][0]] or by_batch[-1:]
    return [Beats("At equal sequences read, a batch 8× larger, with its own learning rate, reaches a lower held-out "
                  "MLM perplexity (Liu et al. 2019, Table 3: 2K × 125K steps 3.68 against 256 × 1M steps 3.99).",
                  "heldout_ppl", higher_is_better=False, percent=False, above=(larger[0],), below=(small,))]


def plan(cfg: BatchSizeConfig) -> Plan:
    settings = settings_of(cfg)
    rows = schedules(settings)
    budget = settings["steps"] * settings["ref_batch"]
    return Plan(
        title="batch size at equal compute: the same blocks read in small batches for many steps or large for few",
        conditions=list(rows),
        metrics=[*METRICS, Metric("tokens_seen", "tokens read", percent=False)],
        settings=settings,
        x={c: B for c, (B, _, _, _) in rows.items()}, xlabel="batch size (blocks per step)",
        notes=[f"Held equal: {budget:,} blocks read by every row (batch × steps, checked); the tokens read are "
               f"counted per run (column; within {TOKEN_TOLERANCE:.0%} of blocks × mean block length, checked). "
               "Same model, data, tokenizer and held-out documents.",
               "Learning rate: lr × sqrt(B / ref_batch): " + ", ".join(
                   f"B={B}: {lr:.2g}" for B, _, lr, _ in rows.values()) + f"; warm-up {settings['warmup_share']:.0%} "
               "of each run's steps.",
               "Liu et al. 2019, Table 3 (BERT-base, equal sequences; MNLI-m and SST-2 dev, perplexity on held-out "
               "training data): 256 × 1M steps (lr 1e-4) perplexity 3.99, "
               "MNLI-m 84.7, SST-2 92.7; 2K × 125K (7e-4) 3.68 / 85.2 / 92.9; 8K × 31K (1e-3) 3.77 / 84.6 / 92.8."],
        claims=claims(rows))


def check_tokens(seen: int, blocks: int, mean_length: float, *, tolerance: float = TOKEN_TOLERANCE) -> None:
    """Raise ConfigError unless ``seen`` tokens is within ``tolerance`` of ``blocks × mean_length``:
    with the same blocks read, every row then reads the same tokens up to 2 × tolerance."""
    expected = blocks * mean_length
    if abs(seen / expected - 1) > tolerance:
        raise ConfigError(f"{NAME}: a run read {seen:,} tokens, {blocks:,} blocks × {mean_length:.1f} = "
                          f"{expected:,.0f} expected (tolerance {tolerance:.0%}): the rows are not at equal compute")


def run_one(condition: str, seed: int, settings: dict) -> dict:
    from minilm.recipes import roberta
    rows = schedules(settings)
    if condition not in rows:
        raise ValueError(f"{NAME}: unknown condition {condition!r}; expected one of {list(rows)}")
    B, steps, lr, warmup = rows[condition]
    cfg = recipe_config(config_of(CONFIG, settings), seed, batch_size=B, steps=steps, lr=lr, warmup=warmup)
    recipe = roberta.RobertaRecipe(cfg)
    seen = tokens_seen(recipe, steps)
    check_tokens(seen, B * steps, float(np.mean([len(b) for b in recipe.train_blocks])))
    pretrain(recipe, run_schedule(cfg, seed))
    recipe.model.eval()
    with no_grad():
        held = recipe.evaluate(recipe.model)
    return {**scores(recipe, held["loss"], held["mlm_accuracy"], seed, settings),
            "tokens_seen": seen, "steps": steps, "lr": lr}
