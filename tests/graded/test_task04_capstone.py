"""GPT capstone: your Transformer (task module 3) and your GPT loss (Task 4.1) inside the real
training loop. A small GPT trained for a fixed budget on the synthetic corpus must bring its
held-out loss below a bigram model's — the same bar ``minilm train gpt`` reports."""
import numpy as np
import pytest

from autograd import optim
from minilm.downstream.baselines import NGramLM
from minilm.data import lm_blocks, synthetic_corpus
from minilm.models.gpt import GPT, GPTConfig
from minilm.recipes.common import stream
from minilm.tokenizers import WordPieceTokenizer
from tests import capstone_vocab


def corpus():
    docs = synthetic_corpus(160, rng=np.random.default_rng(0))
    return docs[:140], docs[140:]


def train_vocabulary() -> WordPieceTokenizer:
    """The vocabulary this capstone uses, as training gives it (tools/make_capstone_vocab.py records it)."""
    return WordPieceTokenizer.train([s for d in corpus()[0] for s in d], 300)


@pytest.mark.slow
@pytest.mark.task4_capstone
@pytest.mark.points(10)
def test_your_gpt_beats_a_bigram_model(impl):
    train_docs, val_docs = corpus()
    tok = capstone_vocab.ready("gpt")  # = train_vocabulary(), without waiting for Task 6.2
    train_ids, val_ids = stream(train_docs, tok), stream(val_docs, tok)
    T = 24
    vx, vy = lm_blocks(val_ids, T)
    bigram = NGramLM(order=2).fit(train_ids, tok.vocab_size).loss(vx, vy)
    with impl.use("task03_transformer", "task04_gpt"):
        model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=T + 1, n_layer=2, n_head=2, n_embd=48),
                    rng=np.random.default_rng(1))
        opt = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
        for step in range(250):
            r = np.random.default_rng([7, step])
            starts = r.integers(0, len(train_ids) - T - 1, size=16)
            ids = train_ids[starts[:, None] + np.arange(T + 1)]  # (16, T+1): lm_loss shifts itself
            loss = model.lm_loss(ids)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        held_out = model.lm_loss(np.concatenate([vx, vy[:, -1:]], axis=1)).item()
    assert held_out < bigram, f"held-out loss {held_out:.3f} is not below the bigram model's {bigram:.3f}"
