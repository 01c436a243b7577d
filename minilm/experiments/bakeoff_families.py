"""The bake-off's families, built: each family's recipe (``minilm/recipes/FAMILY.py``) at the sizes
every family shares, its batch size set so that a batch holds the tokens the others' do, and the
DistilBERT student's recipe. ``bakeoff.py`` holds the comparison: the plan, the equal-compute
checks and one run.

Letters: L blocks of one stack, B sequences per batch, T tokens, V vocabulary, M masked positions.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from autograd import Tensor, no_grad
from autograd.errors import ConfigError
from minilm.experiments.bakeoff_probes import BART, BERT, DEBERTA, ELECTRA, GPT, RANDOM, ROBERTA, STUDENT, T5, XLNET
from minilm.recipes.config import override

__all__ = ["FAMILIES", "DISTIL_WEIGHTS", "DISTIL_TEMPERATURE", "recipe_of", "batch_tokens", "calibrated",
           "DistilledStudent"]

FAMILIES = (RANDOM, GPT, BERT, ROBERTA, ELECTRA, XLNET, T5, BART, DEBERTA, STUDENT)
DISTIL_WEIGHTS = {"soft": 5.0, "mlm": 2.0, "cos": 1.0}   # Sanh et al. 2019 (alpha_ce, alpha_mlm, alpha_cos)
DISTIL_TEMPERATURE = 2.0


def recipe_of(condition: str, settings: dict, seed: int, batch_size: int = 8):
    """The recipe of ``condition`` at the shared sizes, ``batch_size`` sequences per step."""
    from minilm.recipes import bart, bert, deberta, electra, gpt, roberta, t5, xlnet
    s = settings
    common = dict(corpus=s["corpus"], docs=s["docs"], vocab_size=s["vocab_size"], n_head=s["n_head"],
                  n_embd=s["n_embd"], seed=seed, batch_size=batch_size)
    L, half = s["n_layer"], math.ceil(s["n_layer"] / 2)
    if condition == GPT:
        return gpt.GPTRecipe(override(gpt.GPTRecipeConfig(), **common, n_layer=L, block_size=s["seq_len"]))
    if condition in (BERT, RANDOM, STUDENT):
        return bert.BertRecipe(override(bert.BertRecipeConfig(), **common, n_layer=L, max_seq_length=s["seq_len"]))
    if condition == ROBERTA:
        return roberta.RobertaRecipe(override(roberta.RobertaRecipeConfig(), **common, n_layer=L, tokens_per_sample=s["seq_len"]))
    if condition == ELECTRA:
        return electra.ElectraRecipe(override(electra.ElectraRecipeConfig(), **common, n_layer=L, max_seq_length=s["seq_len"]))
    if condition == XLNET:
        return xlnet.XLNetRecipe(override(xlnet.XLNetRecipeConfig(), **common, n_layer=L, block_size=s["seq_len"], name_probes=0))
    if condition == T5:
        return t5.T5Recipe(override(t5.T5RecipeConfig(), **common, n_layer=half, input_length=s["seq_len"]))
    if condition == BART:
        return bart.BartRecipe(override(bart.BartRecipeConfig(), **common, n_layer=half, max_length=s["seq_len"]))
    if condition == DEBERTA:
        from minilm.models.deberta import DebertaForMaskedLM
        recipe = deberta.DebertaRecipe(override(deberta.DebertaRecipeConfig(), **common, n_layer=L, max_seq_length=s["seq_len"],
                                       bert_steps=0))
        # its rows are single sentences, so the recipe sizes the (EMD-only) absolute positions to the
        # longest one; the probes' sentence pairs are longer: give it seq_len positions like the others
        recipe.model_config = replace(recipe.model_config, max_position_embeddings=s["seq_len"])
        recipe.model = DebertaForMaskedLM(recipe.model_config, rng=np.random.default_rng(seed))
        return recipe
    raise ConfigError(f"bakeoff: unknown family {condition!r}; expected one of {FAMILIES}")


def batch_tokens(recipe, rng: np.random.Generator) -> int:
    """The tokens one batch of ``recipe`` feeds its loss (the recipe's own ``tokens`` count)."""
    with no_grad():
        _, metrics = recipe.loss(recipe.model, recipe.batch(rng))
    return int(metrics["tokens"])


def calibrated(condition: str, settings: dict, seed: int):
    """The recipe with the batch size whose batches hold about ``batch_tokens`` tokens: measured on
    sixteen batches of 16 sequences drawn before training (from generators of their own)."""
    probe = 16
    recipe = recipe_of(condition, settings, seed, batch_size=probe)
    draws = [batch_tokens(recipe, np.random.default_rng([seed, 4242, k])) for k in range(16)]
    per_sequence = np.mean(draws) / probe
    recipe.batch_size = max(1, int(round(settings["batch_tokens"] / per_sequence)))
    return recipe


class DistilledStudent:
    """A ``minilm.train`` recipe: the BERT recipe's masked batches, a student of ⌈L/2⌉ blocks
    initialised from every other layer of the frozen ``teacher`` (and its MLM head), DistilBERT's
    loss (Sanh et al. 2019: soft-target CE on the masked positions + MLM + hidden cosine), weighted by
    ``weights`` (default :data:`DISTIL_WEIGHTS`, the paper's; ``{"soft": 0, ...}`` drops a term).

    ``data`` is any object with ``tokenizer``, ``batch_size`` and ``batch(rng)`` giving BERT's masked
    batches (``input_ids``, ``segment_ids``, ``attention_mask``, ``mlm_labels``)."""

    family = "distill"

    def __init__(self, data, teacher, seed: int, weights: dict | None = None):
        from minilm.downstream.distill import default_layer_map, init_student_from_teacher
        from minilm.models.bert_heads import BertForPreTraining
        self.data, self.teacher, self.tokenizer = data, teacher, data.tokenizer
        n = max(1, math.ceil(teacher.config.n_layer / 2))
        self.model_config = replace(teacher.config, n_layer=n)
        self.model = BertForPreTraining(self.model_config, rng=np.random.default_rng([seed, 5]))
        init_student_from_teacher(self.model.bert, teacher.bert, default_layer_map(teacher.config.n_layer, n))
        self.model.cls.load_state_dict(teacher.cls.state_dict())
        self.batch_size = data.batch_size
        self.weights = dict(DISTIL_WEIGHTS if weights is None else weights)

    def batch(self, rng):
        return self.data.batch(rng)

    def loss(self, model, batch):
        from minilm.downstream.distill import cosine_hidden_loss, soft_target_loss
        ids, seg, mask, labels = batch["input_ids"], batch["segment_ids"], batch["attention_mask"], batch["mlm_labels"]
        with no_grad():
            t = self.teacher(ids, seg, mask)
        s = model(ids, seg, mask, mlm_labels=labels)
        B, T, V = s["mlm_logits"].shape
        rows = np.flatnonzero(labels.reshape(-1) != -100)                      # the masked positions
        s_rows = s["mlm_logits"].reshape(B * T, V)[rows]                       # (M, V)
        t_rows = Tensor(t["mlm_logits"].data.reshape(B * T, V)[rows])          # (M, V), a fixed target
        soft = soft_target_loss(s_rows, t_rows, DISTIL_TEMPERATURE)           # T²·KL, as the paper's code
        cos = cosine_hidden_loss(s["last_hidden_state"], Tensor(t["last_hidden_state"].data), mask)
        w = self.weights
        loss = soft * w["soft"] + s["mlm_loss"] * w["mlm"] + cos * w["cos"]
        return loss, {"tokens": int(mask.sum())}

    def evaluate(self, model):
        return {"loss": float(self.loss(model, self.data.batch(np.random.default_rng(99)))[0].item())}

    def baselines(self):
        return {}
