# %% [markdown]
# # Walkthrough 4 — ELECTRA: spot the replaced tokens
#
# BERT learns from the 15% of positions it masks. ELECTRA learns from **every** position: a small
# masked-LM *generator* G fills the masked slots with its own samples, and the *discriminator* D
# (the model we keep) says, for each token, whether it is the original or a replacement:
#
# $$\hat{x}_t \sim p_G(\cdot \mid x^{\text{masked}})\ (t \in m),\qquad y_t = \mathbb{1}[\hat{x}_t \ne x_t]$$
#
# $$\mathcal{L} = \mathcal{L}_{\text{MLM}}(x, \theta_G) + \lambda \sum_t -\big[y_t \log \sigma(D_t) + (1-y_t)\log(1-\sigma(D_t))\big] / T,\qquad \lambda = 50$$
#
# A sample that happens to equal the original counts as *original*. No gradient flows through the
# sampling; G and D share their token embeddings.
#
# Theory and the graded slots: [Task module 7 — ELECTRA](../tasks/07-electra.md).

# %%
import time

import _checkout  # noqa: F401  (puts the checkout's root on sys.path: see _checkout.py)

import numpy as np

from autograd import no_grad, optim
from minilm.data import pad_batch, synthetic_corpus, train_val_split
from minilm.models.electra import Electra, ElectraConfig
from minilm.tokenizers import WordPieceTokenizer

start = time.perf_counter()
rng = np.random.default_rng(0)

# %% [markdown]
# ## Data and model
#
# Each example is one sentence, `[CLS] … [SEP]`, padded to the longest in the batch. The config
# tells the model which ids are `[PAD]`, `[MASK]` and never to be masked.

# %%
docs = synthetic_corpus(240, rng=rng)
train_docs, val_docs = train_val_split(docs, val_fraction=0.1, rng=rng)
tok = WordPieceTokenizer.train([s for d in train_docs for s in d], vocab_size=1000)  # one token per word
train_sents = [tok.build_inputs(tok.encode(s))[0] for d in train_docs for s in d]
val_sents = [tok.build_inputs(tok.encode(s))[0] for d in val_docs for s in d]

config = ElectraConfig(vocab_size=tok.vocab_size, max_position_embeddings=32, n_layer=2, n_head=4, n_embd=64,
                       dropout=0.0, generator_hidden_fraction=0.5, pad_id=tok.pad_id, mask_id=tok.mask_id,
                       special_ids=(tok.cls_id, tok.sep_id))
model = Electra(config, rng=np.random.default_rng(0))
n_gen = sum(p.size for p in model.generator.parameters())
n_disc = sum(p.size for p in model.discriminator.parameters())
print(f"generator: {config.generator_hidden} wide, {n_gen:,} parameters; "
      f"discriminator: {config.n_embd} wide, {n_disc:,} parameters (embeddings shared)")

# %% [markdown]
# ## One forward pass, one sentence at a time
#
# `model(ids, mask, rng=...)` does all of it: mask, run G, sample, run D. The dict it returns
# holds every intermediate step, so we can print them. With an untrained generator the samples
# are random words, easy to spot.

# %%
ids, mask = pad_batch(train_sents[:16], tok.pad_id)
out = model(ids, mask, rng=np.random.default_rng(1))
print("input_ids:", ids.shape, "-> mlm_logits:", out["mlm_logits"].shape, " disc_logits:", out["disc_logits"].shape)
print(f"loss = MLM {out['mlm_loss'].item():.3f} + 50 × disc {out['disc_loss'].item():.3f} = {out['loss'].item():.3f}")


def show(out, row=0):
    """The original, G's input, D's input and D's labels (1 = replaced) for one sentence."""
    real = mask[row].astype(bool)
    for name, a in (("original", ids), ("generator in", out["generator_inputs"]), ("discriminator in", out["disc_inputs"])):
        print(f"{name:>17}: {' '.join(tok.convert_ids_to_tokens(a[row][real]))}")
    labels = out["disc_labels"][row][real]
    print(f"{'replaced?':>17}: {' '.join(tok.id_to_token(int(t)) + ('(R)' if y else '') for t, y in zip(out['disc_inputs'][row][real], labels))}")


show(out)

# %% [markdown]
# ## Training
#
# One optimizer over both networks: the generator learns its masked LM, the discriminator its
# binary task. About 85% of the tokens are original, so "always original" is already a good
# guess: D first learns that, and only then to tell the replacements apart. We follow its mean
# P(replaced) on the replaced tokens and on the originals: the gap between the two is what it
# has learned.

# %%
optimizer = optim.AdamW(model.parameters(), lr=3e-3)
val_ids, val_mask = pad_batch(val_sents[:128], tok.pad_id)


def evaluate(m):
    with no_grad():
        out = m(val_ids, val_mask, rng=np.random.default_rng(99))
    real = val_mask.astype(bool)
    p = 1 / (1 + np.exp(-out["disc_logits"].data))
    y = out["disc_labels"].astype(bool)
    return p[real & y].mean(), p[real & ~y].mean()


print("before: mean P(replaced) %.2f on replaced tokens, %.2f on originals" % evaluate(model))
for step in range(200):
    rows = rng.integers(0, len(train_sents), size=32)
    ids, mask = pad_batch([train_sents[i] for i in rows], tok.pad_id)
    out = model(ids, mask, rng=rng)
    optimizer.zero_grad()
    out["loss"].backward()
    optimizer.step()
    if step % 40 == 0 or step == 199:
        print(f"step {step:3d}  generator MLM {out['mlm_loss'].item():.3f}  discriminator {out['disc_loss'].item():.3f}")
print("after : mean P(replaced) %.2f on replaced tokens, %.2f on originals" % evaluate(model))

# %% [markdown]
# ## What the trained model does
#
# Now the generator's samples are plausible words, so the discriminator's task is harder and more
# useful. For one held-out sentence: the labels, and D's probability that each token was replaced
# After a few seconds D is still unsure (its probabilities stay low and close together);
# `minilm train electra` trains much longer, and the replacements stand out.

# %%
ids, mask = pad_batch(val_sents[:4], tok.pad_id)
with no_grad():
    out = model(ids, mask, rng=np.random.default_rng(7))
row = int(np.argmax(out["disc_labels"].sum(1)))        # the sentence with the most replacements
show(out, row)
real = mask[row].astype(bool)
p = 1 / (1 + np.exp(-out["disc_logits"].data[row][real]))
print(f"{'P(replaced)':>17}: {' '.join(f'{t}:{q:.2f}' for t, q in zip(tok.convert_ids_to_tokens(out['disc_inputs'][row][real]), p))}")
print(f"walkthrough finished in {time.perf_counter() - start:.1f} s")
