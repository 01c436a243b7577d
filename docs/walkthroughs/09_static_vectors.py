# %% [markdown]
# # Walkthrough 9 — Static word vectors from a contextual model
#
# BERT gives every *occurrence* of a word its own vector. Older tools (word2vec, GloVe) give each
# *word* one vector. Bommasani et al. (2020) turn the first into the second in two ways, for any
# layer l and a pooling f over the word's subword pieces (mean, max, min, last):
#
# $$\text{decontextualised:}\quad v_l(w) = f\big(h_l(\text{pieces of } w) \mid \texttt{[CLS]}\ w\ \texttt{[SEP]}\big)$$
#
# $$\text{aggregated:}\quad v_l(w) = g_{c \in \text{contexts}(w)}\Big(f\big(h_l(\text{pieces of } w) \mid c\big)\Big)$$
#
# and then ask: do similar words get similar vectors? Here "similar" means "from the same
# category" (dog / cat, versus dog / singer), scored by the **AUC**: the chance that a random
# same-category pair has a higher cosine than a random different-category pair (0.5 = chance).
#
# Theory and the graded slots: [Task module 11 — static vectors](../tasks/11-static-vectors.md).

# %%
import tempfile
import time
from pathlib import Path

import _checkout  # noqa: F401  (puts the checkout's root on sys.path: see _checkout.py)

import numpy as np

from minilm.data import synthetic_corpus, word_similarity_pairs
from minilm.downstream.finetune import pretrain_bert
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForPreTraining
from minilm.downstream.static import bert_encoder, markdown_table, plot_report, similarity_scores, static_report, static_vectors
from minilm.tokenizers import WordPieceTokenizer

start = time.perf_counter()
rng = np.random.default_rng(0)

# %% [markdown]
# ## The word pairs and the model
#
# `word_similarity_pairs` draws pairs from the corpus's word categories, half of them from the
# same category. We pre-train a small BERT (MLM + NSP) on the synthetic corpus for a few seconds.

# %%
docs = synthetic_corpus(240, rng=rng)
sentences = [s for d in docs for s in d]
pairs = word_similarity_pairs(rng=np.random.default_rng(1), n_pairs=200)
print("pairs:", pairs[:4], "...")
tok = WordPieceTokenizer.train(sentences, vocab_size=1000)          # one token per word
config = BertConfig(vocab_size=tok.vocab_size, max_position_embeddings=32, n_layer=2, n_head=4, n_embd=64)
untrained = BertForPreTraining(config, rng=np.random.default_rng(0))
model = BertForPreTraining(config, rng=np.random.default_rng(0))
losses = pretrain_bert(model, tok, docs, steps=150, batch_size=32, lr=2e-3, max_seq_length=32, seed=0)
print(f"pre-training loss (MLM + NSP): {np.mean(losses[:10]):.3f} -> {np.mean(losses[-10:]):.3f}")

# %% [markdown]
# ## One word, two ways
#
# `static_vectors` takes an `encode` function (a list of id sequences → every layer's hidden
# states) so that it works with any encoder. The result has one vector per layer and word:
# shape (L + 1, W, C), where layer 0 is the embedding layer.

# %%
encode = bert_encoder(model.bert, tok.pad_id)
words = sorted({w for p in pairs for w in p[:2]})
decontextualised = static_vectors(words, tok, encode, pooling="mean")
aggregated = static_vectors(words, tok, encode, sentences[:600], pooling="mean")
print("decontextualised:", decontextualised.shape, " aggregated:", aggregated.shape, "(L+1, W, C)")

# %% [markdown]
# ## The similarity table
#
# The AUC of every (mode, pooling) at every layer, for the trained model. Then the same for the
# untrained one, as a control. Two things to notice:
#
# * the vocabulary has one token per word, so each word has one piece and every pooling f gives
#   the same vector (train the tokenizer with `vocab_size=300` to see them differ);
# * the untrained model's *aggregated* vectors already beat chance, even at layer 0 (the
#   embeddings): averaging a word over its contexts also averages the position embeddings of the
#   places where it occurs, and words of one category fill the same slots of the corpus's
#   sentences (subjects near the start, places after a preposition). The deeper layers mix in
#   the neighbouring words too. So the control matters: training must beat it, and does.

# %%
report = static_report(model.bert, tok, sentences[:600], pairs, poolings=("mean", "max"))
print("trained BERT, AUC:")
print(markdown_table(report))
control = static_report(untrained.bert, tok, sentences[:600], pairs, poolings=("mean",))
print("\nuntrained BERT (control), AUC:")
print(markdown_table(control))
with tempfile.TemporaryDirectory() as tmp:            # the figure goes to a temporary folder
    path = Path(plot_report(report, Path(tmp) / "static.png"))
    print(f"\nplot written to {path.name} ({path.stat().st_size:,} bytes; a temporary file)")

# %% [markdown]
# ## What the vectors say: nearest neighbours
#
# With the best (mode, layer) of the table, the three nearest words of a few words, by cosine.
# Words of one category should find each other.

# %%
best = max(report["rows"], key=lambda r: r["auc"])
vectors = (aggregated if best["mode"] == "aggregated" else decontextualised)[best["layer"]]
if best["pooling"] != "mean":
    vectors = static_vectors(words, tok, encode, sentences[:600] if best["mode"] == "aggregated" else None,
                             pooling=best["pooling"])[best["layer"]]
print(f"best: {best['mode']}, f = {best['pooling']}, layer {best['layer']}, AUC {best['auc']:.3f}")
unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
cos = unit @ unit.T
for w in words[:: max(1, len(words) // 6)][:6]:
    i = words.index(w)
    near = [j for j in np.argsort(-cos[i]) if j != i][:3]
    print(f"{w:>12}: " + ", ".join(f"{words[j]} ({cos[i, j]:.2f})" for j in near))
print(f"similarity on the pairs: {similarity_scores(vectors, words, pairs)}")
print(f"walkthrough finished in {time.perf_counter() - start:.1f} s")
