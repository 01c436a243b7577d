# %% [markdown]
# # Walkthrough 10 — Transformer-XL: a memory of the previous segment
#
# A Transformer sees a fixed window. Transformer-XL (Dai et al. 2019) processes a long text
# segment by segment and lets each layer attend to a **memory**: that layer's inputs from the
# previous segment, kept without gradient (SG = stop-gradient):
#
# $$\tilde{h}^{n-1}_{\tau+1} = \big[\,\mathrm{SG}(h^{n-1}_{\tau}) \circ h^{n-1}_{\tau+1}\big],\qquad
#   q = h^{n-1}_{\tau+1} W_q,\quad k, v = \tilde{h}^{n-1}_{\tau+1} W_{k}, \tilde{h}^{n-1}_{\tau+1} W_{v}$$
#
# Absolute positions would clash (position 3 of this segment and of the last one), so the
# attention scores use **relative** positions: with R_{i−j} a sinusoid of the distance and u, v
# learned biases,
#
# $$A_{ij} = \underbrace{q_i^\top k_j}_{(a)} + \underbrace{q_i^\top W_R R_{i-j}}_{(b)} + \underbrace{u^\top k_j}_{(c)} + \underbrace{v^\top W_R R_{i-j}}_{(d)}$$
#
# Theory and the graded slots: [Task module 12 — beyond](../tasks/12-beyond.md) (Task 12.3).

# %%
import time

import _checkout  # noqa: F401  (puts the checkout's root on sys.path: see _checkout.py)

import numpy as np

from autograd import no_grad, optim
from minilm.models.transformer_xl import TransformerXL, TransformerXLConfig
from minilm.recipes.transformer_xl import RecallVocab, recall_batch

start = time.perf_counter()
rng = np.random.default_rng(0)

# %% [markdown]
# ## A task that needs the past
#
# Each example is a stream of two segments of S = 12 tokens. A **key** token sits somewhere in
# segment 1; segment 2 ends with `QUERY` and the key again. Only the token after `QUERY` is
# scored. Reading segment 2 alone, a model can only guess among the 8 keys (accuracy 1/8).

# %%
S = 12
vocab = RecallVocab(n_keys=8, n_noise=16)
ids, targets = recall_batch(2, S, vocab, rng=np.random.default_rng(3))
print("segment 1:", vocab.decode(ids[0, :S]))
print("segment 2:", vocab.decode(ids[0, S:]))
print("scored   :", [(vocab.tokens[int(ids[0, t])], "->", vocab.tokens[int(targets[0, t])])
                     for t in np.flatnonzero(targets[0] != -100)])

# %% [markdown]
# ## The memory, one segment at a time
#
# `model(ids, mems)` returns the logits and the new memories: one (B, M, C) array per layer.
# The first segment starts with none; the second reads the first one's.

# %%
config = TransformerXLConfig(vocab_size=vocab.vocab_size, n_layer=2, n_head=2, n_embd=32, mem_len=S)
model = TransformerXL(config, rng=np.random.default_rng(0))
logits, mems = model(ids[:, :S])
print("segment 1:", ids[:, :S].shape, "-> logits", logits.shape, "+ memories", [m.shape for m in mems])
logits, mems = model(ids[:, S:], mems)
print("segment 2 with the memory:", ids[:, S:].shape, "-> logits", logits.shape)

# %% [markdown]
# ## Training
#
# `stream_loss` cuts each stream into segments and carries the memory from one to the next. We
# train with the memory on, then evaluate the same model with it on and off.

# %%
val_ids, val_targets = recall_batch(256, S, vocab, rng=np.random.default_rng(99))


def accuracy(m, use_memory):
    with no_grad():
        _, logits = m.stream_loss(val_ids, val_targets, S, use_memory=use_memory)
    scored = val_targets != -100
    return (logits.data.argmax(-1)[scored] == val_targets[scored]).mean()


optimizer = optim.AdamW(model.parameters(), lr=3e-3)
steps = 300
schedule = optim.LambdaLR(optimizer, lambda s: optim.warmup_cosine(min(s, steps), 30, steps, min_ratio=0.1))
for step in range(steps):
    ids, targets = recall_batch(32, S, vocab, rng=rng)
    loss, _ = model.stream_loss(ids, targets, S, use_memory=True)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    schedule.step()
    if step % 50 == 0 or step == steps - 1:
        print(f"step {step:3d}  loss {loss.item():.3f}   (guessing among 8 keys: {np.log(8):.3f})")

# %% [markdown]
# ## What the trained model does
#
# The same weights, two ways of reading: with the memory the key is within reach; without it,
# segment 2 alone leaves a guess.

# %%
print(f"held-out accuracy with the memory:    {accuracy(model, True):.1%}")
print(f"held-out accuracy without the memory: {accuracy(model, False):.1%}   (chance: {1 / 8:.1%})")
print(f"walkthrough finished in {time.perf_counter() - start:.1f} s")
