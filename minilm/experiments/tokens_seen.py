"""``tokens seen``: the real tokens a recipe's loss reads during pre-training, counted as it trains.

Experiments that compare families at equal compute (``gpt-vs-bert``, ``bakeoff``) hold the
pre-training tokens equal, as Kaplan et al. (2020, §2.1) count compute as 6 · P · D with D the
tokens processed. Each recipe's ``loss(model, batch)`` already reports that D for its batch as
``metrics["tokens"]`` (padding excluded); ``CountTokens`` adds these up over a ``minilm.train`` run.
"""
from __future__ import annotations

from autograd.errors import MiniLMError

__all__ = ["CountTokens"]


class CountTokens:
    """A recipe seen by ``minilm.train`` unchanged, except that it adds up the tokens its loss reads
    (``self.tokens``); every other attribute (``model``, ``batch``, ``batch_size``, …) delegates."""

    def __init__(self, recipe):
        self.recipe, self.tokens = recipe, 0

    def __getattr__(self, name):
        return getattr(self.recipe, name)

    def loss(self, model, batch):
        loss, metrics = self.recipe.loss(model, batch)
        if "tokens" not in metrics:
            raise MiniLMError(f"CountTokens: {type(self.recipe).__name__}.loss returned the metrics "
                              f"{sorted(metrics)}: expected a 'tokens' entry (the real tokens its loss "
                              "read), which equal-compute experiments add up")
        self.tokens += int(metrics["tokens"])
        return loss, metrics
