"""DeBERTa vs BERT at equal size: does attention on relative positions, with absolute positions
added only at the top, learn a masked LM better than BERT's absolute positions at the input?

The paper (He et al. 2021, "DeBERTa: Decoding-enhanced BERT with Disentangled Attention", abstract
and §5): a DeBERTa-large trained on half of RoBERTa-large's data beats it on MNLI (91.1 vs 90.2,
GLUE dev, Table 1),
SQuAD v2.0 (90.7 vs 88.4) and RACE (86.8 vs 83.2); the ablation of base models trained alike (§5.3)
finds that removing the enhanced mask decoder, content-to-position or position-to-content attention
each lowers the scores, and the paper reports that DeBERTa also makes pre-training more efficient.
The claims are about fine-tuning; the pre-training objective (MLM) is the same for both models, so
this miniature compares the MLM itself.

The miniature (``minilm/recipes/deberta.py``'s data): 800 synthetic documents (10% held out), one
sentence per row, ``[CLS] sentence [SEP]`` (at most 32 tokens, WordPiece, 400 entries), 15% of the
tokens masked 80/10/10, MLM only for every model — BERT's next-sentence head gets no labels. Within
a seed every condition sees the same sentences, the same batches and the same masks, and trains
with the same loop (``minilm.train``: AdamW, warm-up + cosine decay) for the same number of steps.
Equal size: 2 layers, width 64, 4 heads, feed-forward 256; the parameter counts are printed under
the table (DeBERTa has ~10% more: the relative-position table and its two projections per layer).

Conditions (rows):

* ``most frequent token``: the reference row — always predict the commonest token (accuracy), the
  unigram model of the training tokens (loss); no training.
* ``BERT``: learned absolute positions added to the word embeddings at the input.
* ``DeBERTa, no EMD``: no position at the input; every layer scores content-to-content +
  content-to-position + position-to-content with relative distances clipped at k = 8 (Task 12.4);
  the absolute positions are added once, to the last layer's output, just before the MLM head.
* ``DeBERTa``: the same plus the enhanced mask decoder — the last layer applied twice more to a
  query stream that starts at H + P_abs (§3.2; its weights are shared, so no new parameters, but
  two more layer passes of compute than BERT).

Metrics: held-out MLM accuracy (top-1 at the masked positions of a fixed mask of the held-out
sentences) and held-out MLM loss (mean cross-entropy per masked token, nats; lower is better).
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace

import numpy as np

import autograd.functional as F
from autograd import no_grad
from minilm.experiments import Metric, Plan, config_of, recipe_field, run_schedule, settings_of
from minilm.experiments.claims import Beats
from minilm.recipes.config import override
from minilm.recipes.deberta import DebertaRecipeConfig

NAME = "deberta-vs-bert"
HELP = "DeBERTa (relative positions, enhanced mask decoder) vs a BERT of the same size, MLM only"

REFERENCE, BERT, DEBERTA_NO_EMD, DEBERTA = "most frequent token", "BERT", "DeBERTa, no EMD", "DeBERTa"
CONDITIONS = [REFERENCE, BERT, DEBERTA_NO_EMD, DEBERTA]
CLAIMS = [
    Beats("Disentangled attention on relative positions beats BERT's absolute positions at equal size (He et al. "
          "2021: DeBERTa-large above RoBERTa-large on MNLI, SQuAD v2.0 and RACE); read here on the masked LM both "
          "pre-train with.", "mlm_accuracy", above=(DEBERTA, DEBERTA_NO_EMD), below=(BERT,)),
    Beats("The enhanced mask decoder (absolute positions added only before the output) helps (He et al. 2021, "
          "§5.3: in the ablation of base models, removing it lowers the scores).", "mlm_accuracy", above=(DEBERTA,),
          below=(DEBERTA_NO_EMD,)),
]



@dataclass(frozen=True)
class DebertaVsBertConfig:
    """``minilm experiment deberta-vs-bert``: the DeBERTa recipe's config (``minilm train deberta``), whose data,
    size and schedule every model shares. ``quick()``: toy sizes."""
    recipe: DebertaRecipeConfig = recipe_field(DebertaRecipeConfig(), docs=800, max_relative_positions=8,
                                               bert_steps=0, steps=1000, warmup=100)  # minilm train deberta's;
                                                                                       # its BERT: a row of its own

    @classmethod
    def quick(cls):
        return override(cls(), docs=100, vocab_size=250, max_seq_length=24, n_head=2, n_embd=32, steps=150, lr=3e-3,
                        warmup=15)


CONFIG = DebertaVsBertConfig
OPTIONS = ("corpus", "steps")


def plan(cfg: DebertaVsBertConfig) -> Plan:
    settings = settings_of(cfg)
    return Plan(
        title="DeBERTa vs BERT of the same size, MLM only: held-out masked-LM accuracy and loss",
        conditions=list(CONDITIONS),
        metrics=[Metric("mlm_accuracy", "MLM accuracy"),
                 Metric("mlm_loss", "MLM loss (nats)", percent=False, higher_is_better=False)],
        settings=settings,
        notes=["Paper (He et al. 2021, abstract and Table 1, GLUE dev): fine-tuned, DeBERTa-large 91.1 vs "
               "RoBERTa-large 90.2 MNLI-m; here the two architectures are compared on the masked LM itself.",
               "Same sentences, batches, masks, optimizer and steps for every model within a seed; "
               "most frequent token: accuracy of always predicting it, loss of the unigram model.",
               "DeBERTa's enhanced mask decoder re-applies the last layer twice (shared weights): "
               "the same parameters, more compute. 'no EMD' isolates the disentangled attention.",
               parameter_counts(settings)],
        claims=CLAIMS)


def parameter_counts(settings: dict) -> str:
    """One line: the parameters of each model at these settings (with a vocabulary of vocab_size)."""
    from minilm.models.bert import BertConfig
    from minilm.models.bert_heads import BertForPreTraining
    from minilm.models.deberta import DebertaConfig, DebertaForMaskedLM
    size = dict(vocab_size=settings["vocab_size"], max_position_embeddings=settings["max_seq_length"],
                n_layer=settings["n_layer"], n_head=settings["n_head"], n_embd=settings["n_embd"])
    rng = np.random.default_rng(0)
    bert = BertForPreTraining(BertConfig(**size, dropout=0.0), rng=rng)
    deberta = DebertaForMaskedLM(DebertaConfig(**size, max_relative_positions=settings["max_relative_positions"]),
                                 rng=rng)
    count = lambda module: sum(p.size for p in module.parameters())  # noqa: E731
    unused = count(bert.bert.pooler) + count(bert.cls.seq_relationship)
    return (f"Parameters (V = {settings['vocab_size']}): BERT {count(bert):,} (of which {unused:,} in the pooler "
            f"and NSP head, unused here), DeBERTa {count(deberta):,} (with or without EMD).")


def _recipe_config(settings: dict, seed: int):
    """The experiment's DeBERTa recipe config with this run's seed."""
    return override(config_of(CONFIG, settings).recipe, seed=seed)


def held_out_mlm(data, logits_fn) -> dict:
    """MLM accuracy and mean loss per masked token on ``data``'s fixed held-out mask (the DeBERTa
    recipe's ``val_inputs``, ``val_mask``, ``val_labels``); ``logits_fn(inputs, attention_mask)`` →
    logits (B, T, V). The same measurement for every model."""
    loss = correct = n = 0
    with no_grad():
        for i in range(0, len(data.val_inputs), 64):
            labels = data.val_labels[i:i + 64]
            logits = logits_fn(data.val_inputs[i:i + 64], data.val_mask[i:i + 64])       # (B, T, V)
            loss += F.cross_entropy(logits, labels, reduction="sum").item()
            m = labels != -100
            correct += int((logits.data.argmax(-1)[m] == labels[m]).sum())
            n += int(m.sum())
    return {"mlm_accuracy": correct / max(n, 1), "mlm_loss": loss / max(n, 1)}


class BertMLM:
    """A ``minilm.train`` recipe: the DeBERTa recipe's sentences, batches and masks, with a BERT of the
    same size trained on the masked LM alone (``nsp_labels`` never given, so L = L_MLM)."""

    family = "bert"

    def __init__(self, data, seed: int):
        from minilm.models.bert import BertConfig
        from minilm.models.bert_heads import BertForPreTraining
        c = data.model_config
        self.data, self.tokenizer = data, data.tokenizer
        self.model_config = BertConfig(vocab_size=c.vocab_size, max_position_embeddings=c.max_position_embeddings,
                                       n_layer=c.n_layer, n_head=c.n_head, n_embd=c.n_embd, n_inner=c.n_inner,
                                       dropout=0.0)
        self.model = BertForPreTraining(self.model_config, rng=np.random.default_rng(seed))

    def batch(self, rng):
        return self.data.batch(rng)

    def loss(self, model, batch):
        out = model(batch["input_ids"], None, batch["attention_mask"], mlm_labels=batch["labels"])
        return out["loss"], {"tokens": int(batch["attention_mask"].sum())}

    def evaluate(self, model):
        m = held_out_mlm(self.data, lambda x, mask: model(x, None, mask)["mlm_logits"])
        return {"loss": m["mlm_loss"], **m}

    def baselines(self):
        return {}


def _reference(data) -> dict:
    from minilm.downstream.baselines import NGramLM
    special = np.asarray(data.special)
    tokens = [row[(mask > 0) & ~np.isin(row, special)] for row, mask in zip(data.train_ids, data.train_mask)]
    labels = data.val_labels
    unigram = NGramLM(order=1).fit(tokens, data.tokenizer.vocab_size)
    return {"mlm_accuracy": data.most_frequent.accuracy(labels), "mlm_loss": unigram.loss(labels, labels)}


def run_one(condition: str, seed: int, settings: dict) -> dict[str, float]:
    from minilm.models.deberta import DebertaForMaskedLM
    from minilm.recipes import deberta
    from minilm.train import train
    recipe_cfg = _recipe_config(settings, seed)
    data = deberta.DebertaRecipe(recipe_cfg)       # sentences, tokenizer, masks; a DeBERTa
    if condition == REFERENCE:
        return _reference(data)
    if condition == BERT:
        recipe = BertMLM(data, seed)
        logits_fn = lambda x, mask: recipe.model(x, None, mask)["mlm_logits"]  # noqa: E731
    elif condition in (DEBERTA, DEBERTA_NO_EMD):
        recipe = data
        if condition == DEBERTA_NO_EMD:
            recipe.model_config = replace(data.model_config, emd_layers=0)
            recipe.model = DebertaForMaskedLM(recipe.model_config, rng=np.random.default_rng(seed))
        logits_fn = lambda x, mask: recipe.model(x, mask)["logits"]  # noqa: E731
    else:
        raise ValueError(f"{NAME}: unknown condition {condition!r}; expected one of {CONDITIONS}")
    with tempfile.TemporaryDirectory() as out:
        train(recipe, run_schedule(recipe_cfg, seed), out, progress=False, plot=False)
    recipe.model.eval()
    return held_out_mlm(data, logits_fn)
