"""Static vs dynamic masking (RoBERTa, Liu et al. 2019, §4.1 and Table 1).

BERT masked its training data once, while preparing it, and to see more than one mask per sentence
it stored dupe_factor = 10 differently-masked copies ("static" masking: over 40 epochs every mask
is seen 4 times). RoBERTa draws a new mask every time a sequence is read ("dynamic"). Table 1 of
the paper (BERT-base, SQuAD 2.0 F1 / MNLI-m / SST-2, development sets):

    static  (10 copies)   78.3 / 84.3 / 92.5
    dynamic               78.7 / 84.0 / 92.9

so dynamic masking is "comparable or slightly better" — and needs no 10× copy of the data. The
difference can only matter when the data is read many times: a model that sees the same few masks
again and again can learn *those masks* (which token hides where) instead of the language.

The miniature makes that regime explicit: RoBERTa (minilm/recipes/roberta.py) pre-trained on a
SMALL synthetic corpus (--docs, default 200 documents: about 215 blocks of 64 tokens; with
--corpus FILE or real, the first --docs documents of that text, its last --eval-docs held out) for
about 90 epochs (--steps 600 × 32 blocks per step), with

    static x1           one mask per block, made once (the extreme case)
    static x10 (BERT)   BERT's dupe_factor: 10 masks per block, used in turn
    dynamic (RoBERTa)   a fresh mask every epoch

and, as a reference row, always predicting the most frequent training token (no model; its
"loss" is a unigram model's, fitted on the training blocks).

Metrics (all on masks the model never saw, drawn with the recipe's own 80/10/10 masker):
  held-out MLM accuracy   masked tokens of NEW synthetic documents predicted right (several masks
                          per held-out block) — what generalises;
  held-out MLM loss       cross-entropy on those tokens (nats; lower is better);
  train text, fresh masks accuracy on the TRAINING blocks under new masks: knowing the text;
  train text, seen masks  accuracy on the training blocks under a mask the model was trained on
                          (static: copy 0; dynamic: epoch 0's): seen − fresh is how much of the
                          masks themselves was memorised;
  entailment, fine-tuned  the paper's readout (``--finetune-steps``, 150 by default; 0 skips it):
                          every weight and a new layer on h_<s> trained on 256 entailment pairs,
                          the reference row's the same encoder untrained. The findings are read on
                          the held-out masked LM: on the synthetic text the fine-tune keeps its order
                          but with a spread over seeds as large as dynamic's lead.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import numpy as np

from minilm.experiments import Metric, Plan, config_of, recipe_field, run_schedule, settings_of
from minilm.experiments.claims import Beats
from minilm.experiments.electra_common import TWO_FINETUNE_LRS as FINETUNE_LRS  # the better on 300 dev pairs is kept
from minilm.recipes.config import override
from minilm.recipes.roberta import RobertaRecipeConfig

NAME = "masking"
HELP = "RoBERTa's static vs dynamic masking on a small corpus read for many epochs"

CONDITIONS = {                       # condition -> (masking, static_copies)
    "static x1": ("static", 1),
    "static x10 (BERT)": ("static", 10),
    "dynamic (RoBERTa)": ("dynamic", 10),
}
REFERENCE = "most frequent token (no model)"

CLAIMS = [
    Beats("Dynamic masking is comparable to or slightly better than static masking with 10 copies (Liu et al. "
          "2019, Table 1: SQuAD 2.0 78.7 vs 78.3, MNLI-m 84.0 vs 84.3, SST-2 92.9 vs 92.5); read here on the "
          "held-out masked LM.", "heldout_accuracy",
          above=("dynamic (RoBERTa)",), below=("static x10 (BERT)",)),
    Beats("One mask per sequence, read every epoch, is worse than either: the reason BERT made 10 copies "
          "(Liu et al. 2019, §4.1).", "heldout_accuracy",
          above=("dynamic (RoBERTa)", "static x10 (BERT)"), below=("static x1",)),
]


@dataclass(frozen=True)
class MaskingConfig:
    """``minilm experiment masking``: the RoBERTa recipe's config on a small corpus read for many
    epochs (600 steps of 32 blocks of 64 tokens), each row its masking. ``quick()``: toy sizes."""
    eval_docs: int = 120            # new documents for the held-out metrics
    eval_masks: int = 4             # masks drawn per held-out block
    finetune_steps: int = 150       # also fine-tune each encoder on entailment pairs, the paper's readout, for
                                    # this many steps per learning rate (0: none)
    recipe: RobertaRecipeConfig = recipe_field(RobertaRecipeConfig(), set_by_rows=("masking", "static_copies"),
                                               docs=200)  # minilm train roberta's, on a small corpus

    @classmethod
    def quick(cls):
        return override(cls(), docs=24, steps=150, eval_docs=40, warmup=30, finetune_steps=20)


CONFIG = MaskingConfig
OPTIONS = ("corpus", "docs", "steps", "eval_docs", "finetune_steps")


def plan(cfg: MaskingConfig) -> Plan:
    settings = settings_of(cfg)
    return Plan(
        title="does a new mask every epoch beat a fixed set of masks?",
        conditions=list(CONDITIONS) + [REFERENCE],
        metrics=[Metric("heldout_accuracy", "held-out MLM accuracy"),
                 Metric("heldout_loss", "held-out MLM loss", percent=False, higher_is_better=False),
                 Metric("train_fresh_accuracy", "train text, fresh masks"),
                 Metric("train_seen_accuracy", "train text, seen masks"),
                 *([Metric("finetuned", "entailment, fine-tuned")] if cfg.finetune_steps else [])],
        settings=settings,
        notes=["Liu et al. 2019, Table 1: static 78.3 / 84.3 / 92.5, dynamic 78.7 / 84.0 / 92.9 "
               "(SQuAD 2.0 F1 / MNLI-m / SST-2, dev sets as in all of the paper's §4): comparable or slightly better.",
               "Every model reads the same small corpus for about 90 epochs; seen − fresh masks on the "
               "training text measures how much of its masks a model memorised.",
               finetune_note(cfg)],
        claims=CLAIMS)


PROBE = {"probe_train": 256, "probe_test": 1000}       # the fine-tuned readout's pairs (electra_common's)


def finetune_note(cfg: MaskingConfig) -> str:
    if not cfg.finetune_steps:
        return ("Read on the held-out masked LM; the paper fine-tunes (Table 1), and --finetune-steps N (150 by "
                "default) adds that readout as a column.")
    return (f"Fine-tuned (the paper's readout): a copy of the encoder and a new layer on h_<s>, every weight "
            f"trained {cfg.finetune_steps} steps of 32 on {PROBE['probe_train']} entailment pairs at "
            f"{' and '.join(map(str, FINETUNE_LRS))}, "
            f"the rate best on 300 other pairs scored on {PROBE['probe_test']} test pairs; in the reference row, "
            "the same encoder untrained. The findings are read on the held-out masked LM, the sharper readout at "
            "this size: on the synthetic text (seeds 0-2) the fine-tuned rows keep its order, but dynamic's lead "
            "over static x10 there (3.8 points) is inside their spread over seeds (4.2), where on the masked LM "
            "(1.6) it is outside it (1.0).")


def finetuned(model, tokenizer, seed: int, steps: int) -> float:
    """Entailment accuracy of ``model`` fine-tuned with a new layer on h_<s> (``EncoderClassifier``),
    every weight, ``steps`` steps at each rate of :data:`FINETUNE_LRS` (``electra_common.finetune_pairs``)."""
    from minilm.downstream.finetune import EncoderClassifier
    from minilm.experiments.electra_common import finetune_pairs

    def make(copy):
        return EncoderClassifier(copy, model.config.n_embd, 3, rng=np.random.default_rng([seed, 4]))
    return finetune_pairs(model, make, tokenizer, seed, PROBE, steps=steps, lrs=FINETUNE_LRS)[0]


def epochs_seen(settings: dict, n_blocks: int) -> float:
    """How many times each training block is read: steps × batch size / blocks."""
    return settings["steps"] * settings["batch_size"] / max(n_blocks, 1)


def masked_pairs(blocks, masker, *, seed_prefix) -> list[tuple[np.ndarray, np.ndarray]]:
    """One ``masker`` draw per block, block ``i`` with ``default_rng([*seed_prefix, i])``."""
    return [masker(b, rng=np.random.default_rng([*seed_prefix, i])) for i, b in enumerate(blocks)]


def mlm_scores(model, pairs, pad_id: int, batch: int = 64) -> dict:
    """Masked-LM ``accuracy`` and ``loss`` (mean nats per masked token) of ``model`` on fairseq
    ``(inputs, targets)`` pairs (targets ``pad_id`` where nothing is masked)."""
    import autograd.functional as F
    from autograd import no_grad
    from minilm.corruption import targets_to_labels
    from minilm.data import pad_batch
    total, correct, n = 0.0, 0, 0
    model.eval()
    with no_grad():
        for i in range(0, len(pairs), batch):
            chunk = pairs[i:i + batch]
            inputs, attention = pad_batch([p[0] for p in chunk], pad_id)          # (B, T)
            targets, _ = pad_batch([p[1] for p in chunk], pad_id)
            labels = targets_to_labels(targets, pad_id=pad_id)                  # (B, T), -100 = not masked
            logits = model(inputs, attention)["logits"]                         # (B, T, V)
            total += F.cross_entropy(logits, labels, reduction="sum").item()
            m = labels != -100
            correct += int((logits.data.argmax(-1)[m] == labels[m]).sum())
            n += int(m.sum())
    return {"accuracy": correct / max(n, 1), "loss": total / max(n, 1)}


def _eval_blocks(recipe, docs, settings):
    """Blocks of the held-out documents ``docs``, made like the recipe's training blocks."""
    from minilm.data import encode_documents, roberta_blocks
    tok = recipe.tokenizer
    ids = encode_documents(docs, tok.encode)
    return [np.asarray(b, dtype=np.int64) for b in
            roberta_blocks(ids, settings["tokens_per_sample"], bos_id=tok.bos_id, sep_id=tok.eos_id)]


def run_one(condition: str, seed: int, settings: dict) -> dict:
    from minilm.data import write_corpus
    from minilm.experiments.roberta_common import eval_documents
    from minilm.recipes import roberta
    from minilm.train import train
    if condition not in CONDITIONS and condition != REFERENCE:
        raise ValueError(f"masking: unknown condition {condition!r}")
    masking, copies = CONDITIONS.get(condition, ("dynamic", 1))
    held_docs, pool = eval_documents(settings, seed, NAME)   # new synthetic documents, or --corpus's last ones
    with tempfile.TemporaryDirectory(prefix="minilm-masking-") as tmp:
        corpus = None
        if pool is not None:                                   # the small corpus: its first --docs documents
            corpus = os.path.join(tmp, "corpus.txt")
            write_corpus(pool[:settings["docs"]], corpus)
        recipe_cfg = override(config_of(CONFIG, settings).recipe, seed=seed, masking=masking, static_copies=copies,
                              corpus=corpus)
        recipe = roberta.RobertaRecipe(recipe_cfg)
    pad = recipe.tokenizer.pad_id
    heldout = [p for c in range(settings["eval_masks"])
               for p in masked_pairs(_eval_blocks(recipe, held_docs, settings), recipe.masker, seed_prefix=[seed, 98, c])]
    fresh = [p for c in range(settings["eval_masks"])
             for p in masked_pairs(recipe.train_blocks, recipe.masker, seed_prefix=[seed, 97, c])]
    seen = [recipe.data.get(i, 0) for i in range(len(recipe.data))]  # epoch 0: static copy 0 / dynamic's first
    tuned = settings["finetune_steps"]
    if condition == REFERENCE:                                 # its fine-tune: the encoder before training
        from minilm.corruption import targets_to_labels
        from minilm.data import pad_batch
        untrained = {"finetuned": finetuned(recipe.model, recipe.tokenizer, seed, tuned)} if tuned else {}

        def accuracy(pairs):
            labels = targets_to_labels(pad_batch([t for _, t in pairs], pad)[0], pad_id=pad)
            return recipe.most_frequent.accuracy(labels)
        labels = targets_to_labels(pad_batch([t for _, t in heldout], pad)[0], pad_id=pad)
        m = labels != -100
        return {"heldout_accuracy": accuracy(heldout), "heldout_loss": recipe.unigram.loss(labels[m], labels[m]),
                "train_fresh_accuracy": accuracy(fresh), "train_seen_accuracy": accuracy(seen),
                "epochs": epochs_seen(settings, len(recipe.train_blocks)), **untrained}
    with tempfile.TemporaryDirectory() as out:
        train(recipe, run_schedule(recipe_cfg, seed), out, progress=False, plot=False)
    model = recipe.model
    h, f, s = (mlm_scores(model, pairs, pad) for pairs in (heldout, fresh, seen))
    return {"heldout_accuracy": h["accuracy"], "heldout_loss": h["loss"], "train_fresh_accuracy": f["accuracy"],
            "train_seen_accuracy": s["accuracy"], "epochs": epochs_seen(settings, len(recipe.train_blocks)),
            **({"finetuned": finetuned(model, recipe.tokenizer, seed, tuned)} if tuned else {})}
