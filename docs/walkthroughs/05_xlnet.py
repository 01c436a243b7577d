# %% [markdown]
# # Walkthrough 5 — XLNet: language modelling in a random order
#
# GPT predicts left to right; BERT predicts masked tokens independently of each other. XLNet
# samples a **factorisation order** z (a permutation of the positions) and predicts tokens in
# that order, each from the ones before it *in z*:
#
# $$\max_\theta\ \mathbb{E}_{z}\Big[\sum_{t > c} \log p_\theta(x_{z_t} \mid x_{z_{<t}})\Big]$$
#
# The tokens never move: only the **attention masks** change with z. With *partial prediction*
# only the last 1/K of the order are targets (t > c). A target must know *where* it predicts but
# not *what* is there, so the model runs two streams: the content stream h (sees its own token)
# and the query stream g (sees only its position), sharing every weight.
#
# Theory and the graded slots: [Task module 8 — XLNet](../tasks/08-xlnet.md).

# %%
import time

import _checkout  # noqa: F401  (puts the checkout's root on sys.path: see _checkout.py)

import numpy as np

from autograd import no_grad, optim
from minilm.corruption import xlnet_inputs
from minilm.data import lm_blocks, sample_lm_batch, synthetic_corpus, train_val_split
from minilm.models.xlnet import XLNet, XLNetConfig
from minilm.models.xlnet_predict import name_probes, predict_in_order, score_name_predictions
from minilm.tokenizers import WordPieceTokenizer

start = time.perf_counter()
rng = np.random.default_rng(0)

# %% [markdown]
# ## The permutation mask of one sentence
#
# `xlnet_inputs` draws an order, picks the targets (the last 1/K of the order) and builds
# `perm_mask`, where **True means "may not attend"**. Read the grid row by row: row *i* marks
# with `x` the positions that position *i* may look at (`.`: hidden). The non-targets are the
# context: they see each other and no target. A target sees the context and the targets that
# come before it in the order, never itself: the last target in z sees everything else.

# %%
docs = synthetic_corpus(240, rng=rng)
train_docs, val_docs = train_val_split(docs, val_fraction=0.1, rng=rng)
tok = WordPieceTokenizer.train([s for d in train_docs for s in d], vocab_size=1000)  # one token per word


def stream(documents):
    ids = []
    for doc in documents:
        for sentence in doc:
            ids.extend(tok.encode(sentence))
        ids.append(tok.sep_id)                        # [SEP] between documents
    return np.asarray(ids, dtype=np.int64)


train_ids, val_ids = stream(train_docs), stream(val_docs)

sentence = np.asarray(tok.encode(train_docs[0][1]))
one = xlnet_inputs(sentence, rng=np.random.default_rng(2), K=3)
words = tok.convert_ids_to_tokens(sentence)
rank = np.argsort(one["order"])                       # rank[i]: when position i comes in the order
print("order of prediction:", " → ".join(words[i] for i in one["order"]))
print("targets            :", [w for w, t in zip(words, one["labels"]) if t != -100])
width = max(len(w) for w in words)
print(" " * (width + 8) + " ".join(f"{i:>2}" for i in range(len(words))))
for i, w in enumerate(words):
    marks = " ".join(" ." if one["perm_mask"][i, j] else " x" for j in range(len(words)))
    print(f"{i:>2} {w:>{width}} (z{rank[i]:>2}) {marks}{'   ← target' if one['labels'][i] != -100 else ''}")

# %% [markdown]
# ## The model and one forward pass
#
# The model gets the real tokens, the mask, and `target_mapping`: one one-hot row per target, so
# the query stream (and the logits) have one row per target: (B, P, V), not (B, T, V).

# %%
T, K = 24, 3          # XLNet uses K = 6; K = 3 gives more targets per window, so it learns faster here
config = XLNetConfig(vocab_size=tok.vocab_size, max_position_embeddings=T, n_layer=2, n_head=4, n_embd=64)
model = XLNet(config, rng=np.random.default_rng(0))
x, _ = sample_lm_batch(train_ids, T, 16, rng=rng)
batch = xlnet_inputs(x, rng=rng, K=K, functional_ids=(tok.sep_id,))
out = model(batch["input_ids"], batch["perm_mask"], batch["target_mapping"], labels=batch["target_labels"])
print("input_ids:", batch["input_ids"].shape, " perm_mask:", batch["perm_mask"].shape,
      " target_mapping:", batch["target_mapping"].shape, "-> logits:", out["logits"].shape)
print(f"initial loss {out['loss'].item():.3f}  (log V = {np.log(tok.vocab_size):.3f})")

# %% [markdown]
# ## Training
#
# Every step draws new windows and a new order for each. XLNet learns more slowly than GPT (each
# window gives only T/K targets). The first milestone is to beat the unigram model (token
# frequencies alone) on the same held-out targets; that takes a few hundred steps.

# %%
val = xlnet_inputs(lm_blocks(val_ids, T)[0][:64], rng=np.random.default_rng(99), K=K, functional_ids=(tok.sep_id,))
counts = np.bincount(train_ids, minlength=tok.vocab_size) + 1
unigram = -np.log(counts / counts.sum())[val["target_labels"][val["target_labels"] != -100]].mean()


def held_out(m):
    with no_grad():
        out = m(val["input_ids"], val["perm_mask"], val["target_mapping"], labels=val["target_labels"])
    return out["loss"].item()


STEPS = 300
optimizer = optim.AdamW(model.parameters(), lr=2e-3)
# a linear warm-up, then cosine decay: XLNet sits on the unigram plateau for a while, and a
# gentle start helps it leave
schedule = optim.LambdaLR(optimizer, lambda s: optim.warmup_cosine(min(s, STEPS), 50, STEPS, min_ratio=0.1))
print(f"held-out loss {held_out(model):.3f} before training (unigram: {unigram:.3f})")
for step in range(STEPS):
    x, _ = sample_lm_batch(train_ids, T, 32, rng=rng)
    batch = xlnet_inputs(x, rng=rng, K=K, functional_ids=(tok.sep_id,))
    loss = model(batch["input_ids"], batch["perm_mask"], batch["target_mapping"], labels=batch["target_labels"])["loss"]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    schedule.step()
    if step % 50 == 0 or step == STEPS - 1:
        print(f"step {step:3d}  loss {loss.item():.3f}")
print(f"held-out loss {held_out(model):.3f} after training (unigram: {unigram:.3f})")

# %% [markdown]
# ## What the trained model does: names, in order or all at once
#
# The corpus has two-word names (`new york`, `new delhi`, `los angeles`). We hide both words of
# each name and let the model fill them in two ways: **in order** (the second word sees the
# first, as XLNet factorises) or **independently** (BERT's assumption). Only the first can know
# that *angeles* goes with *los*. A few seconds of training are not enough to learn the names
# well; `minilm train xlnet --K 2` is (see the task note).

# %%
probes = name_probes(val_ids, tok, block_size=T, max_probes=64)
for order in ("left_to_right", "independent"):
    predicted = predict_in_order(model, probes["input_ids"], probes["is_target"], order=order)
    scores = score_name_predictions(predicted, probes)
    span = probes["is_target"][0]
    print(f"{order:>13}: first probe -> {' '.join(tok.convert_ids_to_tokens(predicted[0][span]))!r} "
          f"(truth {' '.join(tok.convert_ids_to_tokens(probes['input_ids'][0][span]))!r}); "
          f"{scores['coherent_rate']:.0%} of {scores['n']} spell a real name")
print(f"walkthrough finished in {time.perf_counter() - start:.1f} s")
