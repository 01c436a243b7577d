# %% [markdown]
# # Walkthrough 2 — BERT: fill in the blanks, and tell whether B follows A
#
# BERT reads the whole sentence at once (no causal mask) and is trained on two tasks together.
#
# **Masked LM.** About 15% of the tokens are chosen; of those, 80% become `[MASK]`, 10% a random
# token and 10% stay as they are. The model predicts the original token at the chosen positions
# only (m_t = 1 there, 0 elsewhere):
#
# $$\mathcal{L}_{\text{MLM}} = -\frac{1}{\sum_t m_t}\sum_{t} m_t \log p_\theta(x_t \mid \tilde{x})$$
#
# **Next-sentence prediction.** The input is `[CLS] A [SEP] B [SEP]`; half of the time B really
# followed A (IsNext), half of the time it comes from another document (NotNext). A classifier
# on the pooled `[CLS]` vector predicts which: $\mathcal{L} = \mathcal{L}_{\text{MLM}} + \mathcal{L}_{\text{NSP}}$.
#
# Theory and the graded slots: [Task module 5 — BERT](../tasks/05-bert.md).

# %%
import time

import _checkout  # noqa: F401  (puts the checkout's root on sys.path: see _checkout.py)

import numpy as np

from autograd import no_grad, optim
from minilm.corruption import mask_tokens
from minilm.data import create_nsp_instances, encode_documents, nsp_arrays, synthetic_corpus, train_val_split
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForPreTraining
from minilm.tokenizers import WordPieceTokenizer

start = time.perf_counter()
rng = np.random.default_rng(0)

# %% [markdown]
# ## Sentence pairs for NSP
#
# We encode each document's sentences and let `create_nsp_instances` build
# `[CLS] A [SEP] B [SEP]` pairs, with segment ids 0 for A and 1 for B, padded to one length.

# %%
docs = synthetic_corpus(240, rng=rng)
train_docs, val_docs = train_val_split(docs, val_fraction=0.1, rng=rng)
tok = WordPieceTokenizer.train([s for d in train_docs for s in d], vocab_size=1000)  # big enough: every word is one token
max_len = 40


def pairs(documents, passes):
    ids = encode_documents(documents, tok.encode)
    instances = [inst for _ in range(passes) for inst in create_nsp_instances(
        ids, max_seq_length=max_len, rng=rng, cls_id=tok.cls_id, sep_id=tok.sep_id)]
    return nsp_arrays(instances, max_seq_length=max_len, pad_id=tok.pad_id)


train, val = pairs(train_docs, 3), pairs(val_docs, 2)
print({name: a.shape for name, a in train.items()})
i = 0
label = ["IsNext", "NotNext"][train["next_sentence_label"][i]]
real = train["attention_mask"][i].astype(bool)
print(f"pair 0 ({label}):", tok.decode(train["input_ids"][i][real]))
print("segment ids:     ", "".join(str(s) for s in train["segment_ids"][i][real]))

# %% [markdown]
# ## The masked-LM corruption on one sentence
#
# `mask_tokens` never chooses the special tokens. Its `labels` hold the original id at the chosen
# positions and -100 (ignored by the loss) everywhere else. Below, `[x→y]` means the input shows
# `y` where the text had `x`; a chosen token left unchanged is shown `[x→x]`.

# %%
special = [tok.pad_id, tok.cls_id, tok.sep_id]
ids = train["input_ids"][:1]
inputs, labels = mask_tokens(ids, mask_id=tok.mask_id, vocab_size=tok.vocab_size, special_ids=special,
                             rng=np.random.default_rng(3), prob=0.25)  # 25% here, so that one pair shows a few
shown = []
for t, (orig, new, lab) in enumerate(zip(ids[0], inputs[0], labels[0])):
    if not real[t]:
        break
    a, b = tok.id_to_token(int(orig)), tok.id_to_token(int(new))
    shown.append(f"[{a}→{b}]" if lab != -100 else a)
print(" ".join(shown))

# %% [markdown]
# ## The model and one forward pass
#
# `BertForPreTraining` returns a dict: MLM logits for every position, NSP logits for the pair,
# and the two losses when labels are given.

# %%
config = BertConfig(vocab_size=tok.vocab_size, max_position_embeddings=max_len, n_layer=2, n_head=4, n_embd=64)
model = BertForPreTraining(config, rng=np.random.default_rng(0))


def batch(data, rows, rng):
    inputs, labels = mask_tokens(data["input_ids"][rows], mask_id=tok.mask_id, vocab_size=tok.vocab_size,
                                 special_ids=special, rng=rng)
    return dict(input_ids=inputs, segment_ids=data["segment_ids"][rows],
                attention_mask=data["attention_mask"][rows], mlm_labels=labels,
                nsp_labels=data["next_sentence_label"][rows])


b = batch(train, np.arange(16), rng)
out = model(**b)
print("input_ids:", b["input_ids"].shape, "-> mlm_logits:", out["mlm_logits"].shape,
      " nsp_logits:", out["nsp_logits"].shape)
print(f"initial MLM loss {out['mlm_loss'].item():.3f} (log V = {np.log(tok.vocab_size):.3f}),"
      f" NSP loss {out['nsp_loss'].item():.3f} (log 2 = 0.693)")

# %% [markdown]
# ## Training
#
# Each step draws 16 pairs and a **fresh** mask for them. We watch both losses fall.

# %%
val_batch = batch(val, np.arange(min(128, len(val["input_ids"]))), np.random.default_rng(99))  # one fixed mask


def evaluate(m):
    with no_grad():
        out = m(**val_batch)
    chosen = val_batch["mlm_labels"] != -100
    mlm_acc = (out["mlm_logits"].data.argmax(-1)[chosen] == val_batch["mlm_labels"][chosen]).mean()
    nsp_acc = (out["nsp_logits"].data.argmax(-1) == val_batch["nsp_labels"]).mean()
    return mlm_acc, nsp_acc


optimizer = optim.AdamW(model.parameters(), lr=3e-3)
print("held-out MLM accuracy %.1f%%, NSP accuracy %.1f%% before training" % tuple(100 * a for a in evaluate(model)))
for step in range(200):
    b = batch(train, rng.integers(0, len(train["input_ids"]), size=16), rng)
    out = model(**b)
    optimizer.zero_grad()
    out["loss"].backward()
    optimizer.step()
    if step % 20 == 0 or step == 199:
        print(f"step {step:3d}  MLM {out['mlm_loss'].item():.3f}  NSP {out['nsp_loss'].item():.3f}")
print("held-out MLM accuracy %.1f%%, NSP accuracy %.1f%% after training" % tuple(100 * a for a in evaluate(model)))

# %% [markdown]
# NSP learns slowly in so few steps (it needs the topic of both sentences); the masked LM learns
# first the frequent words, then the grammar of the corpus.
#
# ## What the trained model does: a cloze
#
# The corpus has subject–verb agreement across a distracting phrase: `the dogs near the tree run .`
# We mask the verb and ask the model to choose between the right form (*run*) and the wrong one
# (*runs*). Only the subject, several words to the left, tells which is right.
#
# Be warned: a few seconds of training teach the frequent words (`the`, `.`) and little grammar,
# so expect the agreement score to sit near chance here. `minilm train bert` runs 2,000 steps;
# re-run this cell after training longer (raise the step count above) and watch it climb.

# %%
from minilm.data import agreement_probes

probes = agreement_probes(200, rng=np.random.default_rng(5), target="verb")


def cloze(words, index):
    """The model's log-probabilities for the word at ``index`` of ``words``, masked."""
    ids, segments = tok.build_inputs(tok.convert_tokens_to_ids(words))
    ids = np.asarray([ids])
    ids[0, index + 1] = tok.mask_id                     # +1: [CLS] comes first
    with no_grad():
        logits = model(ids, np.asarray([segments]), np.ones_like(ids))["mlm_logits"].data[0, index + 1]
    return ids[0], logits - np.logaddexp.reduce(logits)


p = probes[0]
ids, logp = cloze(p.words, p.index)
top = np.argsort(-logp)[:5]
print("input :", tok.decode(ids))
print("top 5 :", ", ".join(f"{tok.id_to_token(int(t))} ({np.exp(logp[t]):.0%})" for t in top))
print(f"p({p.answer}) = {np.exp(logp[tok.token_to_id(p.answer)]):.1%}   p({p.foil}) = {np.exp(logp[tok.token_to_id(p.foil)]):.1%}")

right = [cloze(p.words, p.index)[1] for p in probes]
right = np.mean([lp[tok.token_to_id(p.answer)] > lp[tok.token_to_id(p.foil)] for p, lp in zip(probes, right)])
print(f"agreement: the right verb form wins in {right:.0%} of {len(probes)} probes (chance: 50%)")
print(f"walkthrough finished in {time.perf_counter() - start:.1f} s")
