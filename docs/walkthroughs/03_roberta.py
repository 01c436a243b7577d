# %% [markdown]
# # Walkthrough 3 — RoBERTa: BERT's masked LM, trained better
#
# RoBERTa keeps BERT's model and its masked-LM loss,
#
# $$\mathcal{L}_{\text{MLM}} = -\frac{1}{|M|}\sum_{t \in M} \log p_\theta(x_t \mid \tilde{x}),$$
#
# and changes how it is trained: **no next-sentence prediction**; inputs are **packed full
# sentences** up to a fixed length (FULL-SENTENCES, crossing document boundaries with a `</s>`);
# a **byte-level BPE** vocabulary that can spell any text; and **dynamic masking**: a new mask
# each time a sequence is seen, instead of the few masks BERT fixed once when it wrote its data.
#
# Theory and the graded slots: [Task module 6 — RoBERTa](../tasks/06-roberta.md).

# %%
import functools
import time

import _checkout  # noqa: F401  (puts the checkout's root on sys.path: see _checkout.py)

import numpy as np

from autograd import no_grad, optim
from minilm.corruption import MaskedDataset, roberta_mask, targets_to_labels
from minilm.data import encode_documents, pad_batch, roberta_blocks, synthetic_corpus, train_val_split
from minilm.models.roberta import RobertaConfig, RobertaForMaskedLM
from minilm.tokenizers import ByteLevelBPETokenizer

start = time.perf_counter()
rng = np.random.default_rng(0)

# %% [markdown]
# ## Byte-level BPE
#
# The tokenizer starts from the 256 bytes and learns merges of frequent neighbours. A word that
# follows a space carries the space inside its first token, shown as `Ġ`; decoding is exact.

# %%
docs = synthetic_corpus(240, rng=rng)
train_docs, val_docs = train_val_split(docs, val_fraction=0.1, rng=rng)
tok = ByteLevelBPETokenizer.train([s for d in train_docs for s in d], vocab_size=1000)
sentence = train_docs[0][1]
ids = tok.encode(sentence)
print("sentence:", sentence)
print("tokens  :", tok.convert_ids_to_tokens(ids))
print("decoded :", tok.decode(ids), "| round trip exact:", tok.decode(ids) == sentence)

# %% [markdown]
# ## FULL-SENTENCES packing
#
# Whole sentences are packed into blocks of at most 48 tokens with `<s>` in front; when a document
# ends inside a block, `</s>` marks the boundary and the next document goes on.

# %%
block_len = 48
train_blocks = [np.asarray(b) for b in roberta_blocks(encode_documents(train_docs, tok.encode), block_len,
                                                      bos_id=tok.bos_id, sep_id=tok.eos_id, mode="full")]
val_blocks = [np.asarray(b) for b in roberta_blocks(encode_documents(val_docs, tok.encode), block_len,
                                                    bos_id=tok.bos_id, sep_id=tok.eos_id, mode="full")]
print(f"{len(train_blocks)} training blocks; block 0 ({len(train_blocks[0])} tokens):")
print(tok.decode(train_blocks[0]))

# %% [markdown]
# ## Dynamic versus static masking
#
# `roberta_mask` masks one sequence; `MaskedDataset` decides *when* masks are drawn. Dynamic: the
# mask of (sequence, epoch) is drawn from a generator seeded by both, so each epoch differs.
# Static (BERT): a few copies are masked once and reused. Here is one sentence in three epochs.

# %%
masker = functools.partial(roberta_mask, mask_id=tok.mask_id, vocab_size=tok.vocab_size,
                           nspecial=max(tok.special_ids) + 1, pad_id=tok.pad_id)
one = [np.asarray([tok.bos_id] + ids)]


def show(inputs):
    return "".join(" <mask>" if t == tok.mask_id else tok.decode([t]) for t in inputs)


for name, dynamic in (("dynamic", True), ("static", False)):
    data = MaskedDataset(one, masker, seed=0, dynamic=dynamic, static_copies=1)
    for epoch in range(3):
        print(f"{name:7s} epoch {epoch}: {show(data.get(0, epoch)[0])}")

# %% [markdown]
# ## The model and one forward pass
#
# `RobertaForMaskedLM` is BERT's encoder with one segment and one head (the MLM). The masker
# returns fairseq-style targets (`<pad>` where nothing is predicted); `targets_to_labels` turns
# them into -100 for the loss.

# %%
config = RobertaConfig(vocab_size=tok.vocab_size, max_position_embeddings=block_len, n_layer=2, n_head=4,
                       n_embd=64)
model = RobertaForMaskedLM(config, rng=np.random.default_rng(0))
train_data = MaskedDataset(train_blocks, masker, seed=0, dynamic=True)


def to_arrays(pairs):
    inputs, attention_mask = pad_batch([i for i, _ in pairs], tok.pad_id)
    targets, _ = pad_batch([t for _, t in pairs], tok.pad_id)
    return inputs, attention_mask, targets_to_labels(targets, pad_id=tok.pad_id)


inputs, attention_mask, labels = to_arrays([train_data.get(i, 0) for i in range(16)])
out = model(inputs, attention_mask, labels=labels)
print("input_ids:", inputs.shape, "-> logits:", out["logits"].shape, "(B, T, V)")
print(f"initial loss {out['loss'].item():.3f}  (log V = {np.log(tok.vocab_size):.3f})")

# %% [markdown]
# ## Training, epoch by epoch
#
# The batches walk through the blocks in a shuffled order; every pass over the data is a new
# epoch, and `train_data.get(index, epoch)` gives each block a mask it has not had before.

# %%
val_inputs, val_mask, val_labels = to_arrays([masker(b, rng=np.random.default_rng([99, i]))
                                              for i, b in enumerate(val_blocks[:64])])


def accuracy(m):
    with no_grad():
        logits = m(val_inputs, val_mask)["logits"].data
    chosen = val_labels != -100
    return (logits.argmax(-1)[chosen] == val_labels[chosen]).mean()


optimizer = optim.AdamW(model.parameters(), lr=3e-3)
order, epoch, steps, batch_size = [], -1, 150, 16
print(f"held-out masked-token accuracy before training: {accuracy(model):.1%}")
for step in range(steps):
    if len(order) < batch_size:                    # start a new epoch
        epoch += 1
        order = list(np.random.default_rng([0, epoch]).permutation(len(train_blocks)))
    rows, order = order[:batch_size], order[batch_size:]
    inputs, attention_mask, labels = to_arrays([train_data.get(i, epoch) for i in rows])
    loss = model(inputs, attention_mask, labels=labels)["loss"]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 25 == 0 or step == steps - 1:
        print(f"step {step:3d}  epoch {epoch}  loss {loss.item():.3f}")
print(f"held-out masked-token accuracy after training:  {accuracy(model):.1%}")

# %% [markdown]
# ## What the trained model does
#
# The same cloze as BERT's, on a held-out block: `[original → guess]` at every chosen position
# (whether the input showed `<mask>`, a random token or the original). After a few seconds the
# guesses are mostly the frequent words; `minilm train roberta` trains for 600 steps.

# %%
with no_grad():
    guess = model(val_inputs[:1], val_mask[:1])["logits"].data[0].argmax(-1)
row = []
for t, (inp, lab) in enumerate(zip(val_inputs[0], val_labels[0])):
    if not val_mask[0, t]:
        break
    word = tok.decode([int(inp)])
    if lab != -100:   # a chosen position: [original → the model's guess]
        word = f" [{tok.decode([int(lab)]).strip()} → {tok.decode([int(guess[t])]).strip()}]"
    row.append(word)
print("".join(row))
print(f"walkthrough finished in {time.perf_counter() - start:.1f} s")
