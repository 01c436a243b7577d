# %% [markdown]
# # Walkthrough 11 — DeBERTa: content and position, kept apart
#
# BERT adds a position vector to each word vector and attends over the sum. DeBERTa keeps the
# two apart. Each token has a content vector; each *pair* (i, j) has a relative-position index
# δ(i, j) = clip(i − j + k, 0, 2k − 1) into a table P of 2k relative embeddings. The attention
# score adds three terms:
#
# $$A_{ij} = \frac{Q^c_i \cdot K^c_j \;+\; Q^c_i \cdot K^r_{\delta(i,j)} \;+\; K^c_j \cdot Q^r_{\delta(j,i)}}{\sqrt{3d}}$$
#
# content-to-content, content-to-position and position-to-content. Relative positions alone
# cannot say which word is the sentence's subject, so the **enhanced mask decoder** adds
# absolute positions only at the very end, just before the masked-LM head. Training is the
# masked LM of RoBERTa (no NSP).
#
# Theory and the graded slots: [Task module 12 — beyond](../tasks/12-beyond.md) (Task 12.4).

# %%
import time

import _checkout  # noqa: F401  (puts the checkout's root on sys.path: see _checkout.py)

import numpy as np

from autograd import no_grad, optim
from minilm.corruption import mask_tokens
from minilm.data import pad_batch, synthetic_corpus, train_val_split
from minilm.models.deberta import DebertaConfig, DebertaForMaskedLM
from minilm.tokenizers import WordPieceTokenizer

start = time.perf_counter()
rng = np.random.default_rng(0)

# %% [markdown]
# ## Relative positions of one sentence
#
# With k = 4, distances beyond ±4 share the table's first or last row. Row i of the grid is the
# query word, column j the key word; the diagonal (i = j) is index k.

# %%
docs = synthetic_corpus(240, rng=rng)
train_docs, val_docs = train_val_split(docs, val_fraction=0.1, rng=rng)
tok = WordPieceTokenizer.train([s for d in train_docs for s in d], vocab_size=1000)  # one token per word
k = 4
words = train_docs[0][1].split()
T = len(words)
delta = np.clip(np.arange(T)[:, None] - np.arange(T)[None, :] + k, 0, 2 * k - 1)   # (T, T)
width = max(len(w) for w in words)
print(" " * (width + 1) + " ".join(f"{w[:3]:>3}" for w in words))
for w, row in zip(words, delta):
    print(f"{w:>{width}} " + " ".join(f"{d:>3}" for d in row))

# %% [markdown]
# ## The model, the mask and one forward pass
#
# Each example is one sentence, `[CLS] … [SEP]`, with BERT's 80/10/10 masking. The model returns
# the MLM logits and every layer's hidden states.

# %%
sentences = [tok.build_inputs(tok.encode(s))[0] for d in train_docs for s in d]
val_sentences = [tok.build_inputs(tok.encode(s))[0] for d in val_docs for s in d][:128]
special = [tok.pad_id, tok.cls_id, tok.sep_id]


def batch(rows, rng):
    ids, attention_mask = pad_batch(rows, tok.pad_id)
    inputs, labels = mask_tokens(ids, mask_id=tok.mask_id, vocab_size=tok.vocab_size, special_ids=special, rng=rng)
    return inputs, attention_mask, labels


config = DebertaConfig(vocab_size=tok.vocab_size, max_position_embeddings=32, max_relative_positions=k,
                       n_layer=2, n_head=4, n_embd=64)
model = DebertaForMaskedLM(config, rng=np.random.default_rng(0))
inputs, attention_mask, labels = batch(sentences[:16], np.random.default_rng(1))
print("masked:", tok.decode(inputs[0][attention_mask[0]]))
out = model(inputs, attention_mask, labels=labels)
print("input_ids:", inputs.shape, "-> logits:", out["logits"].shape, "; hidden states:",
      [h.shape for h in out["hidden_states"]])
print(f"initial loss {out['loss'].item():.3f}  (log V = {np.log(tok.vocab_size):.3f})")

# %% [markdown]
# ## Training

# %%
val = batch(val_sentences, np.random.default_rng(99))


def accuracy(m):
    with no_grad():
        logits = m(val[0], val[1])["logits"].data
    chosen = val[2] != -100
    return (logits.argmax(-1)[chosen] == val[2][chosen]).mean()


optimizer = optim.AdamW(model.parameters(), lr=2e-3)
print(f"held-out masked-token accuracy before training: {accuracy(model):.1%}")
for step in range(150):
    inputs, attention_mask, labels = batch([sentences[i] for i in rng.integers(0, len(sentences), size=32)], rng)
    loss = model(inputs, attention_mask, labels=labels)["loss"]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 30 == 0 or step == 149:
        print(f"step {step:3d}  loss {loss.item():.3f}")
print(f"held-out masked-token accuracy after training:  {accuracy(model):.1%}")

# %% [markdown]
# ## What the trained model does: where it looks
#
# The attention of the last layer's first head for one held-out sentence (each row sums to 1),
# and the model's guess (`original → guess`) at each chosen position. Look for diagonals: the
# relative terms let a head learn "look one word to the right" (or left) once, and apply it at
# every position of every sentence.

# %%
r = int(np.flatnonzero((val[2] != -100).any(axis=1))[0])      # a held-out sentence with a masked word
with no_grad():
    out = model(val[0][r:r + 1], val[1][r:r + 1])
attention = model.layers[-1].attn.last_attention[0, 0]          # the last call: the enhanced mask decoder
real = val[1][r].astype(bool)
tokens = tok.convert_ids_to_tokens(val[0][r][real])
print(" " * 9 + " ".join(f"{t[:5]:>5}" for t in tokens))
for t, row in zip(tokens, attention[: real.sum(), : real.sum()]):
    print(f"{t[:8]:>8} " + " ".join(f"{a:5.2f}" for a in row))
guess = out["logits"].data[0].argmax(-1)
print("guesses:", ", ".join(f"{tok.id_to_token(int(val[2][r, t]))} → {tok.id_to_token(int(guess[t]))}"
                            for t in np.flatnonzero(val[2][r] != -100)))
print(f"walkthrough finished in {time.perf_counter() - start:.1f} s")
