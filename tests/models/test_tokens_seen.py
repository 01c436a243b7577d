"""``minilm.experiments.tokens_seen.CountTokens``: the one token counter of the equal-compute
experiments (gpt-vs-bert, bakeoff)."""
import pytest

from autograd.errors import MiniLMError
from minilm.experiments import bakeoff, gpt_vs_bert
from minilm.experiments.tokens_seen import CountTokens


class Recipe:
    family, batch_size = "x", 3

    def loss(self, model, batch):
        return batch, {"tokens": batch}


def test_adds_the_tokens_and_delegates():
    c = CountTokens(Recipe())
    assert c.loss(None, 5) == (5, {"tokens": 5})
    c.loss(None, 7)
    assert c.tokens == 12 and c.family == "x" and c.batch_size == 3


def test_both_experiments_use_the_one_class():
    assert bakeoff.Counted is CountTokens and gpt_vs_bert.CountTokens is CountTokens


def test_a_loss_without_a_token_count_is_named():
    class NoTokens(Recipe):
        def loss(self, model, batch):
            return batch, {"loss": 1.0}
    with pytest.raises(MiniLMError, match=r"NoTokens.loss returned the metrics \['loss'\]: expected a 'tokens'"):
        CountTokens(NoTokens()).loss(None, 5)
