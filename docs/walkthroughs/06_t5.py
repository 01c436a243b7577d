# %% [markdown]
# # Walkthrough 6 — T5: span corruption with an encoder–decoder
#
# T5 treats every task as text in, text out. Its pre-training task, **span corruption**, cuts
# about 15% of the tokens out of the input in short spans (mean length 3), puts one **sentinel**
# `<extra_id_k>` where each span was, and asks the decoder to write the spans back, each after
# its sentinel. The encoder reads the corrupted input x̃ with full attention; the decoder is
# causal and attends to the encoder (cross-attention). The loss is teacher-forced cross-entropy
# on the target y (sentinels and spans, ending with `</s>`):
#
# $$\mathcal{L} = -\frac{1}{|y|}\sum_{j} \log p_\theta(y_j \mid y_{<j},\ \tilde{x})$$
#
# Theory and the graded slots: [Task module 9 — seq2seq](../tasks/09-seq2seq.md) (Task 9.1 is
# span corruption, 9.2 the encoder–decoder).

# %%
import time

import _checkout  # noqa: F401  (puts the checkout's root on sys.path: see _checkout.py)

import numpy as np

from autograd import no_grad, optim
from minilm.corruption import random_spans_helper, reconstruct, span_corruption, t5_sentinel_ids
from minilm.data import pad_batch, synthetic_corpus, train_val_split
from minilm.models.t5 import T5, T5Config
from minilm.tokenizers import WordPieceTokenizer

start = time.perf_counter()
rng = np.random.default_rng(0)

# %% [markdown]
# ## A vocabulary with sentinels
#
# T5's sentinels are the *top* ids of the vocabulary, counting down: `<extra_id_0>` is V − 1. We
# train WordPiece on the corpus and append 16 sentinel tokens. `[SEP]` plays T5's `</s>`.

# %%
docs = synthetic_corpus(240, rng=rng)
train_docs, val_docs = train_val_split(docs, val_fraction=0.1, rng=rng)
base = WordPieceTokenizer.train([s for d in train_docs for s in d], vocab_size=1000)  # one token per word
vocab = [base.id_to_token(i) for i in range(base.vocab_size)]
sentinel_tokens = [f"<extra_id_{k}>" for k in reversed(range(16))]
tok = WordPieceTokenizer(vocab + sentinel_tokens, additional_special_tokens=sentinel_tokens)
sentinels = t5_sentinel_ids(tok.vocab_size, 16)
eos = tok.sep_id
print(f"V = {tok.vocab_size}; <extra_id_0> = {sentinels[0]} = {tok.id_to_token(int(sentinels[0]))!r}")

# %% [markdown]
# ## One span-corruption pair
#
# On one real sentence (a denser noise than T5's 15%, so that one short sentence shows two spans):

# %%
sentence = np.asarray(tok.encode(train_docs[0][1]))
inputs, targets = span_corruption(sentence, sentinel_ids=sentinels, eos_id=eos, rng=np.random.default_rng(4),
                                  noise_density=0.3, mean_span_length=2.0)
print("original:", tok.decode(sentence))
print("inputs  :", " ".join(tok.convert_ids_to_tokens(inputs)))
print("targets :", " ".join(tok.convert_ids_to_tokens(targets)))
print("reconstruct(inputs, targets) == original:", np.array_equal(reconstruct(inputs, targets, sentinels, eos), sentence))

# %% [markdown]
# ## Training examples and one forward pass
#
# T5 picks the raw window length so that the *corrupted* input has a fixed length:
# `random_spans_helper(32, 0.15, 3)` says how many raw tokens to cut, and how long the targets
# will be. Inputs are padded with `[PAD]`, labels with -100; the model builds the decoder's input
# by shifting the labels right behind a start token (`[PAD]`, as in T5).

# %%
raw_length, target_length = random_spans_helper(32, 0.15, 3.0)
print(f"windows of {raw_length} raw tokens -> inputs of 32 tokens, targets of {target_length}")


def stream(documents):
    return np.asarray([t for d in documents for s in d for t in tok.encode(s)], dtype=np.int64)


train_ids, val_ids = stream(train_docs), stream(val_docs)


def examples(ids, n, rng):
    starts = rng.integers(0, len(ids) - raw_length, size=n)
    pairs = [span_corruption(ids[s:s + raw_length], sentinel_ids=sentinels, eos_id=eos, rng=rng) for s in starts]
    src, src_mask = pad_batch([p[0] for p in pairs], tok.pad_id)
    labels, _ = pad_batch([p[1] for p in pairs], -100)
    return src, src_mask, labels


config = T5Config(vocab_size=tok.vocab_size, n_embd=64, n_head=4, n_layer=2, pad_id=tok.pad_id, eos_id=eos)
model = T5(config, rng=np.random.default_rng(0))
src, src_mask, labels = examples(train_ids, 16, rng)
out = model(src, attention_mask=src_mask, labels=labels)
print("inputs:", src.shape, " labels:", labels.shape, "-> logits:", out["logits"].shape, "(B, target length, V)")
print(f"initial loss {out['loss'].item():.3f}  (log V = {np.log(tok.vocab_size):.3f})")

# %% [markdown]
# ## Training

# %%
val_src, val_mask, val_labels = examples(val_ids, 64, np.random.default_rng(99))


def held_out(m):
    with no_grad():
        return m(val_src, attention_mask=val_mask, labels=val_labels)["loss"].item()


optimizer = optim.AdamW(model.parameters(), lr=3e-3)
print(f"held-out loss before training: {held_out(model):.3f}")
for step in range(200):
    src, src_mask, labels = examples(train_ids, 16, rng)
    loss = model(src, attention_mask=src_mask, labels=labels)["loss"]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 40 == 0 or step == 199:
        print(f"step {step:3d}  loss {loss.item():.3f}")
print(f"held-out loss after training:  {held_out(model):.3f}")

# %% [markdown]
# ## What the trained model does: it writes the missing spans
#
# Greedy decoding from the encoder's reading of a held-out corrupted input. The sentinels come
# out in order (the easy part, learnt first); the words inside the spans are the hard part.

# %%
with no_grad():
    generated = model.generate(val_src[:3], max_new_tokens=target_length + 2, attention_mask=val_mask[:3])
for i in range(3):
    real = val_mask[i].astype(bool)
    wanted = val_labels[i][val_labels[i] != -100]
    got = generated[i][generated[i] != tok.pad_id]
    print("input    :", " ".join(tok.convert_ids_to_tokens(val_src[i][real])))
    print("expected :", " ".join(tok.convert_ids_to_tokens(wanted)))
    print("generated:", " ".join(tok.convert_ids_to_tokens(got)))
    print()
print(f"walkthrough finished in {time.perf_counter() - start:.1f} s")
