"""BERT capstone: your WordPiece (5.1), masking and MLM loss (5.2), NSP pairs (5.3) and
Transformer (module 3) inside ``minilm train bert``'s own recipe and loop. A small BERT trained for a
fixed budget must bring its held-out masked-LM loss well under its start and predict masked tokens
better than always guessing the most frequent token."""
import pytest

from minilm.recipes.bert import BertRecipe, BertRecipeConfig
from minilm.recipes.config import override
from minilm.train import TrainConfig, train
from tests import capstone_vocab


CONFIG = override(BertRecipeConfig(), seed=0, corpus=None, docs=150, max_seq_length=32, n_layer=2, n_head=2,
                  n_embd=48, batch_size=32, vocab_size=300, dropout=0.0, dupe_factor=3)


@pytest.mark.slow
@pytest.mark.task5_capstone
@pytest.mark.points(10)
def test_your_bert_learns_mlm_and_nsp(impl, tmp_path):
    # the recipe's vocabulary comes ready-made (the one training gives), so that it does not wait for Task 6.2
    with impl.use("task03_transformer", "task05_bert"), capstone_vocab.trained_as("bert"):
        recipe = BertRecipe(CONFIG)
        cfg = TrainConfig(steps=300, lr=3e-3, warmup=30, eval_every=300, checkpoint_every=300, seed=0)
        summary = train(recipe, cfg, tmp_path, progress=False, plot=False)
    m, b = summary["metrics"], summary["baselines"]
    assert summary["final_loss"] < summary["initial_loss"] - 1.0, \
        (f"your BERT's training loss fell from {summary['initial_loss']:.3f} to only {summary['final_loss']:.3f} in "
         "300 steps (at least 1.0 lower expected): check the masking (5.2), the MLM loss and the NSP pairs (5.3)")
    assert m["mlm_loss"] < 5.0, \
        (f"your BERT's held-out masked-LM loss is {m['mlm_loss']:.3f}, expected < 5.0 (ln 300 = 5.7 is a uniform "
         "guess): is the MLM loss taken at the masked positions only?")
    assert m["mlm_accuracy"] > b["most_frequent_token_accuracy"] + 0.03, \
        (f"your BERT predicts masked tokens with accuracy {m['mlm_accuracy']:.3f}, not clearly above always guessing "
         f"the most frequent token ({b['most_frequent_token_accuracy']:.3f} + 0.03)")
