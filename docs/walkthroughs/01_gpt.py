# %% [markdown]
# # Walkthrough 1 — GPT: predict the next token
#
# GPT is a stack of Transformer blocks with a **causal mask**: position *t* may look at
# positions 0 … *t* and never at the future. It is trained on plain text with one loss, the
# negative log-likelihood of every next token given the ones before it ("teacher forcing"):
#
# $$\mathcal{L}_{\text{LM}} = -\frac{1}{N}\sum_{t} \log p_\theta(x_{t+1} \mid x_{\le t})$$
#
# There is no corruption of the input: the *target* is the input shifted left by one token.
# This walkthrough builds a tiny GPT on the synthetic corpus, shows one window and its targets,
# runs one forward pass, trains for a few seconds and lets the model write.
#
# Theory and the graded slots: [Task module 4 — GPT](../tasks/04-gpt.md).
# Run it as a script (`python docs/walkthroughs/01_gpt.py`) or open it as a notebook with jupytext.

# %%
import time

import _checkout  # noqa: F401  (puts the checkout's root on sys.path: see _checkout.py)

import numpy as np

from autograd import no_grad, optim
from minilm.downstream.baselines import NGramLM
from minilm.data import lm_blocks, sample_lm_batch, synthetic_corpus, train_val_split
from minilm.models.gpt import GPT, GPTConfig
from minilm.tokenizers import WordPieceTokenizer

start = time.perf_counter()
rng = np.random.default_rng(0)

# %% [markdown]
# ## The data
#
# The synthetic corpus is a list of documents, each a list of sentences about one topic. We train a
# small WordPiece vocabulary on it and join every document's tokens into one long stream, with a
# `[SEP]` between documents. GPT's training examples are random windows of that stream.

# %%
docs = synthetic_corpus(240, rng=rng)
train_docs, val_docs = train_val_split(docs, val_fraction=0.1, rng=rng)
tok = WordPieceTokenizer.train([s for d in train_docs for s in d], vocab_size=300)


def stream(documents):
    ids = []
    for doc in documents:
        for sentence in doc:
            ids.extend(tok.encode(sentence))
        ids.append(tok.sep_id)
    return np.asarray(ids, dtype=np.int64)


train_ids, val_ids = stream(train_docs), stream(val_docs)
print("one document:", train_docs[0])
print(f"vocabulary: {tok.vocab_size} tokens; training stream: {len(train_ids):,} tokens")

# %% [markdown]
# ## Inputs and targets
#
# `sample_lm_batch` cuts random windows `x` of `block_size` tokens (and `y`, the same windows one
# token later). The model reads a window and, at each position, predicts the token that comes next:
# the labels are the window itself, shifted by Task 4.1's `causal_lm_loss`. Read the two columns
# below: each target is the token on the next line.

# %%
block_size = 32
x, y = sample_lm_batch(train_ids, block_size, batch_size=16, rng=rng)
print("x:", x.shape, " y:", y.shape)
for inp, tgt in list(zip(tok.convert_ids_to_tokens(x[0]), tok.convert_ids_to_tokens(y[0])))[:10]:
    print(f"  sees ... {inp:>10}  ->  must predict {tgt}")

# %% [markdown]
# ## The model and one forward pass
#
# `model(x, labels=x)` returns `(logits, loss)`: one score per vocabulary entry at every position,
# and the mean loss of the T − 1 next-token predictions of each window. Before training the loss
# should be close to log V, the loss of a uniform guess.

# %%
config = GPTConfig(vocab_size=tok.vocab_size, block_size=block_size, n_layer=2, n_head=4, n_embd=64)
model = GPT(config, rng=np.random.default_rng(0))
n_params = sum(p.size for p in model.parameters())
logits, loss = model(x, labels=x)
print(f"parameters: {n_params:,}")
print("input ids:", x.shape, "-> logits:", logits.shape, "(B, T, V)")
print(f"initial loss {loss.item():.3f}  vs  log V = {np.log(tok.vocab_size):.3f}")

# %% [markdown]
# ## Training
#
# A plain loop: draw a batch, compute the loss, `backward()`, one AdamW step. The full recipe
# (`minilm train gpt`) adds warm-up, a cosine schedule, clipping and checkpoints; here we keep
# only the essentials and a short run.

# %%
val_x, _ = lm_blocks(val_ids, block_size)   # held-out windows (N, T)


def held_out_loss(m):
    with no_grad():
        _, loss = m(val_x[:64], labels=val_x[:64])
        return loss.item()


optimizer = optim.AdamW(model.parameters(), lr=4e-3)
print(f"held-out loss before training: {held_out_loss(model):.3f}")
for step in range(120):
    x, _ = sample_lm_batch(train_ids, block_size, batch_size=16, rng=rng)
    _, loss = model(x, labels=x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 20 == 0 or step == 119:
        print(f"step {step:3d}  training loss {loss.item():.3f}")
print(f"held-out loss after training:  {held_out_loss(model):.3f}")

# %% [markdown]
# Is that good? A **bigram model** (counts of which token follows which) is the simplest model that
# uses one token of context. The Transformer can use the whole window, so it should end up below
# the bigram's loss; train longer (`minilm train gpt`) and the gap grows.

# %%
bigram = NGramLM(order=2).fit(train_ids, tok.vocab_size)
print(f"bigram held-out loss: {bigram.loss(val_x[:64, :-1], val_x[:64, 1:]):.3f}")   # the same predictions

# %% [markdown]
# ## What the trained model does: it writes
#
# `generate` feeds the model its own output, one token at a time. Greedy decoding takes the most
# likely token; sampling with a temperature and top-k gives more varied text (Task 4.2).

# %%
prompt = np.asarray(tok.encode("the dogs near the"))
greedy = model.generate(prompt, 10, greedy=True)
sampled = model.generate(prompt, 10, rng=np.random.default_rng(1), temperature=0.8, top_k=20)
print("greedy :", tok.decode(greedy))
print("sampled:", tok.decode(sampled))
print(f"walkthrough finished in {time.perf_counter() - start:.1f} s")
