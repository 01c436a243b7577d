"""GPT-1 fine-tuning with the auxiliary LM loss, on sentiment with negation (Radford et al. 2018, §3.2).

1. **Pre-train** a small GPT as a language model (L1, teacher-forced next-token loss) on the synthetic
   corpus, one sentence per row: ``[CLS] sentence [SEP]`` (the tokenizer's [CLS] plays GPT-1's start
   token ⟨s⟩, [SEP] its extract token ⟨e⟩). ``pretrain_steps=0`` fine-tunes a random model.
2. **Fine-tune** every weight plus one new layer W_y on the state of the last real token — the
   extract token — (Task 12.1's ``sequence_representation``) with Task 12.1's
   ``L3 = L2 + λ·L1``, where L1 is the LM loss on the same labelled sentences (padding ignored).
3. **Compare** λ = 0 (plain fine-tuning) with λ = ``aux_lm`` (the paper's 0.5) from the *same*
   pre-trained model, data and fine-tuning seed, over several seeds: only λ differs within a seed.
4. **Baselines**, on the same sentences: a bag-of-words logistic regression
   (``minilm.downstream.baselines.BagOfWordsClassifier``: near chance on the negated half, where only the pair
   "not good" decides) and the majority class of the training labels.

    from minilm.downstream.gpt_finetune import run_gpt_finetune
    r = run_gpt_finetune(0.5, pool="last", seeds=(0, 1, 2))
    r["mean_accuracy"]                       # {"0.0": ..., "0.5": ...}
    r["initial_loss"], r["final_loss"]       # held-out task loss before / after fine-tuning (λ = 0.5)
    r["baselines"]["bow_accuracy"]

The losses reported are *held-out task losses*: the mean cross-entropy L2 of the test sentences'
labels (not L3, and not the training loss), so λ = 0 and λ = 0.5 are measured on the same scale.
Before fine-tuning the new head is random, so ``initial_loss`` is about log 2 = 0.693.

The paper's ablation (Table 5) finds the auxiliary objective helps on the larger datasets (NLI, QQP)
and not on the smaller ones; on a task this small, expect the two to be close — read the spread
over seeds before reading the means. The default is ``N_TRAIN`` = 200 labelled sentences: with
2,000 the task saturates (λ = 0 reaches 100% on every seed, and nothing is left to compare).
Measured (seeds 0-2, 200 pre-training steps, mean test accuracy λ = 0 / λ = 0.5; bag of words):
100 sentences 71.8% / 74.0% (65%), 200: 91.1% / 93.7% (66%), 400: 96.1% / 99.1% (66%),
2,000: 100% / 86.4% (67%; one seed of λ = 0.5 stayed at 64%).

Letters: B batch, T time (tokens per sentence), C channels, V vocabulary, N examples.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import autograd.functional as F
from autograd import nn, no_grad, tasks
from autograd.errors import ConfigError, ShapeError
from minilm.downstream.baselines import BagOfWordsClassifier
from minilm.blocks import causal_mask, check_token_ids, embed_inputs
from minilm.data import pad_batch, sentiment_dataset, synthetic_corpus
from minilm.downstream.finetune import _train_loop
from minilm.models.gpt import GPT, GPTConfig
from minilm.tokenizers import WordPieceTokenizer

# Task 12.1: solutions/task12_beyond/aux_lm.py
gpt_finetune_loss = tasks.bind("task12_beyond.aux_lm", "gpt_finetune_loss")
sequence_representation = tasks.bind("task12_beyond.aux_lm", "sequence_representation")

__all__ = ["GPTForSequenceClassification", "lm_loss_padded", "pretrain_gpt", "finetune_gpt", "gpt_accuracy",
           "gpt_evaluate", "text_baselines", "run_gpt_finetune", "format_gpt_report", "POOLING"]

POOLING = ("last", "mean", "max")
IGNORE_INDEX = -100
N_TRAIN = 200  # labelled sentences by default: few enough that the task does not saturate


def lm_loss_padded(logits, ids, attention_mask):
    """L1 on right-padded rows: predict ``ids[:, t+1]`` from position t, only where t+1 is real.
    logits (B, T, V), ids and attention_mask (B, T) → a scalar Tensor."""
    targets = np.where(np.asarray(attention_mask)[:, 1:] > 0, ids[:, 1:], IGNORE_INDEX)  # (B, T-1)
    return F.cross_entropy(logits[:, :-1], targets, ignore_index=IGNORE_INDEX)


class GPTForSequenceClassification(nn.Module):
    """A GPT with one new linear layer on a sequence vector (GPT-1 §3.2, Fig. 1).

    ``forward(ids, attention_mask, labels=None, aux_weight=0.5)`` → dict with ``logits`` (B, K),
    ``lm_loss`` (L1 on these rows) and, with labels, ``loss`` = L2 + λ·L1 (Task 12.1).
    The decoder is causal, so right padding never changes the states of the real tokens."""

    def __init__(self, gpt: GPT, num_labels: int = 2, *, rng, pool: str = "last"):
        super().__init__()
        if pool not in POOLING:
            raise ConfigError(f"GPTForSequenceClassification: pool={pool!r}, expected one of {POOLING}")
        self.gpt, self.pool = gpt, pool
        self.classifier = nn.Linear(gpt.config.n_embd, num_labels, rng=rng, init_std=gpt.config.init_std)

    def hidden_states(self, ids):
        """The final states LN_f(h_L) (B, T, C): GPT's forward up to, not including, the LM head."""
        g = self.gpt
        ids = check_token_ids("GPTForSequenceClassification", ids, g.config.vocab_size)
        x = g.drop(embed_inputs(ids, g.wte.weight, g.wpe.weight))   # (B, T, C)
        mask = causal_mask(ids.shape[1])
        for block in g.blocks:
            x = block(x, mask=mask)
        return g.ln_f(x)                                              # (B, T, C)

    def forward(self, ids, attention_mask, labels=None, aux_weight: float = 0.5) -> dict:
        ids = np.asarray(ids)
        if np.shape(attention_mask) != ids.shape:
            raise ShapeError(f"GPTForSequenceClassification: attention_mask of shape {np.shape(attention_mask)}, "
                             f"expected the ids' shape {ids.shape}")
        h = self.hidden_states(ids)                                    # (B, T, C)
        lm_logits = h @ self.gpt.wte.weight.T                          # (B, T, V): the tied LM head
        lm = lm_loss_padded(lm_logits, ids, attention_mask)            # L1
        logits = self.classifier(sequence_representation(h, attention_mask, self.pool))  # (B, K)
        loss = None if labels is None else gpt_finetune_loss(logits, labels, lm, aux_weight)
        return {"loss": loss, "logits": logits, "lm_loss": lm}


def _encode(tokenizer, texts, max_len):
    seqs = [tokenizer.encode(t, add_special_tokens=True) for t in texts]   # [CLS] text [SEP]
    T = min(max(len(s) for s in seqs), max_len)
    return pad_batch(seqs, tokenizer.pad_id, T, truncate=True)             # right padding


def pretrain_gpt(gpt: GPT, ids, mask, *, steps, batch_size, lr, seed, progress=False) -> list[float]:
    """L1 alone on the rows ``ids`` (N, T) (right-padded sentences); returns the losses."""
    def loss_fn(rng):
        idx = rng.integers(0, len(ids), size=batch_size)
        T = int(mask[idx].sum(axis=1).max())
        logits, _ = gpt(ids[idx, :T])
        return lm_loss_padded(logits, ids[idx, :T], mask[idx, :T])
    return _train_loop(gpt, loss_fn, steps, lr, seed=seed, name="GPT pre-training", progress=progress)


def finetune_gpt(model: GPTForSequenceClassification, ids, mask, labels, *, aux_weight, steps, batch_size, lr,
                 seed, progress=False) -> list[float]:
    """L3 = L2 + λ·L1 on the labelled rows; returns the losses."""
    labels = np.asarray(labels)

    def loss_fn(rng):
        idx = rng.integers(0, len(labels), size=batch_size)
        T = int(mask[idx].sum(axis=1).max())                  # cut the batch to its longest row
        return model(ids[idx, :T], mask[idx, :T], labels[idx], aux_weight=aux_weight)["loss"]
    return _train_loop(model, loss_fn, steps, lr, seed=seed, name=f"fine-tuning (λ={aux_weight})",
                       progress=progress)


def gpt_evaluate(model: GPTForSequenceClassification, ids, mask, labels, batch_size: int = 256
                 ) -> tuple[np.ndarray, float]:
    """``(correct, loss)``: a boolean array (was each example classified correctly?) and the mean
    cross-entropy of the labels (the task loss L2 on these examples)."""
    model.eval()
    labels = np.asarray(labels)
    correct, total = [], 0.0
    with no_grad():
        for i in range(0, len(ids), batch_size):
            logits = model(ids[i:i + batch_size], mask[i:i + batch_size])["logits"]
            correct.append(logits.data.argmax(-1) == labels[i:i + batch_size])
            total += F.cross_entropy(logits, labels[i:i + batch_size], reduction="sum").item()
    return np.concatenate(correct), total / len(labels)


def gpt_accuracy(model: GPTForSequenceClassification, ids, mask, labels, batch_size: int = 256) -> np.ndarray:
    """A boolean array: was each example classified correctly?"""
    return gpt_evaluate(model, ids, mask, labels, batch_size)[0]


def text_baselines(train_texts, y_train, test_texts, y_test, negated) -> dict:
    """The simple answers on the same sentences: a bag-of-words logistic regression (accuracy overall,
    on the negated and on the plain sentences, and its held-out cross-entropy) and the majority class
    of the training labels (its accuracy, and the cross-entropy of predicting the training label
    frequencies)."""
    y_train, y_test, negated = np.asarray(y_train), np.asarray(y_test), np.asarray(negated, dtype=bool)
    bow = BagOfWordsClassifier().fit(list(train_texts), y_train)
    proba = bow.predict_proba(list(test_texts))                               # (N, K)
    correct = proba.argmax(-1) == y_test
    K = max(int(y_train.max()), int(y_test.max())) + 1
    freq = np.bincount(y_train, minlength=K) / len(y_train)                   # (K,)
    return {"bow_accuracy": float(correct.mean()), "bow_negation_accuracy": float(correct[negated].mean()),
            "bow_plain_accuracy": float(correct[~negated].mean()),
            "bow_loss": float(-np.log(np.maximum(proba[np.arange(len(y_test)), y_test], 1e-12)).mean()),
            "majority_accuracy": float((y_test == int(freq.argmax())).mean()),
            "majority_loss": float(-np.log(np.maximum(freq[y_test], 1e-12)).mean())}


def run_gpt_finetune(aux_lm: float = 0.5, pool: str = "last", seeds=(0, 1, 2), *, steps: int = 300,
                     pretrain_steps: int = 300, batch_size: int = 32, lr: float = 1e-3, pretrain_lr: float = 2e-3,
                     n_docs: int = 300, n_train: int = N_TRAIN, n_test: int = 1000, vocab_size: int = 500,
                     n_layer: int = 2, n_head: int = 2, n_embd: int = 64, block_size: int = 32,
                     dropout: float = 0.1, progress: bool = True) -> dict:
    """Fine-tune with λ = 0 and λ = ``aux_lm`` from the same pre-trained GPT, for every seed.

    Returns the numbers ``minilm finetune --family gpt --aux-lm λ --json`` prints:

    * ``initial_loss`` / ``final_loss``: the held-out task loss (mean cross-entropy of the test labels)
      before fine-tuning and after fine-tuning with λ = ``aux_lm``, means over seeds;
    * ``metrics``: accuracy, negation_accuracy, plain_accuracy and test_loss with λ = ``aux_lm``
      (means over seeds), and ``metrics_by_lambda`` the same for every λ run;
    * ``baselines``: the bag of words and the majority class (``text_baselines``), means over seeds;
    * per λ (keys ``"0.0"`` and ``f"{aux_lm}"``): the test accuracies per seed (``accuracy``), their
      mean and standard deviation, the accuracy on the negated sentences, the held-out and the
      training losses per seed."""
    if aux_lm < 0:
        raise ConfigError(f"run_gpt_finetune: aux_lm={aux_lm}, expected λ >= 0")
    if pool not in POOLING:
        raise ConfigError(f"run_gpt_finetune: pool={pool!r}, expected one of {POOLING}")
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ConfigError("run_gpt_finetune: seeds is empty; give at least one")
    for name, v in (("steps", steps), ("batch_size", batch_size), ("n_train", n_train), ("n_test", n_test)):
        if v < 1:
            raise ConfigError(f"run_gpt_finetune: {name}={v}, expected >= 1")
    t0 = time.time()
    lambdas = [0.0] if aux_lm == 0 else [0.0, float(aux_lm)]
    keys = [str(lam) for lam in lambdas]
    per_seed = {name: {k: [] for k in keys} for name in
                ("accuracy", "negation_accuracy", "plain_accuracy", "test_loss", "train_loss_first", "train_loss_last")}
    initial_losses, baselines = [], []
    for seed in seeds:
        data_rng = np.random.default_rng([seed, 1])
        train, test = sentiment_dataset(n_train, rng=data_rng), sentiment_dataset(n_test, rng=data_rng)
        docs = synthetic_corpus(n_docs, rng=np.random.default_rng([seed, 2]))
        corpus = [s for d in docs for s in d]
        tok = WordPieceTokenizer.train(corpus + [e.text for e in train], vocab_size)
        ids_tr, m_tr = _encode(tok, [e.text for e in train], block_size)
        ids_te, m_te = _encode(tok, [e.text for e in test], block_size)
        y_tr, y_te = np.array([e.label for e in train]), np.array([e.label for e in test])
        negated = np.array([e.negated for e in test])
        baselines.append(text_baselines([e.text for e in train], y_tr, [e.text for e in test], y_te, negated))
        config = GPTConfig(vocab_size=tok.vocab_size, block_size=block_size, n_layer=n_layer, n_head=n_head,
                           n_embd=n_embd, dropout=dropout, seed=seed)
        base = GPT(config, rng=np.random.default_rng([seed, 3]))
        if pretrain_steps:
            # the unlabelled task sentences join the corpus, as BooksCorpus covers the language of GPT-1's
            # tasks: without them L1 starts near 6 nats on the task's unseen words and swamps L2
            ids_c, m_c = _encode(tok, corpus + [e.text for e in train], block_size)
            if progress:
                print(f"seed {seed}: pre-training GPT on {len(corpus) + len(train)} sentences", file=sys.stderr, flush=True)
            pretrain_gpt(base, ids_c, m_c, steps=pretrain_steps, batch_size=batch_size, lr=pretrain_lr,
                         seed=[seed, 4], progress=progress)
        state = base.state_dict()
        for lam, key in zip(lambdas, keys):      # the same start, data and seed: only λ differs
            gpt = GPT(config, rng=np.random.default_rng([seed, 3]))
            gpt.load_state_dict(state)
            clf = GPTForSequenceClassification(gpt, 2, rng=np.random.default_rng([seed, 5]), pool=pool)
            if lam == lambdas[0]:                # before fine-tuning: the same model for every λ
                initial_losses.append(gpt_evaluate(clf, ids_te, m_te, y_te)[1])
            losses = finetune_gpt(clf, ids_tr, m_tr, y_tr, aux_weight=lam, steps=steps, batch_size=batch_size,
                                  lr=lr, seed=[seed, 6], progress=progress)
            correct, test_loss = gpt_evaluate(clf, ids_te, m_te, y_te)
            for name, value in (("accuracy", correct.mean()), ("negation_accuracy", correct[negated].mean()),
                                ("plain_accuracy", correct[~negated].mean()), ("test_loss", test_loss),
                                ("train_loss_first", losses[0]), ("train_loss_last", np.mean(losses[-20:]))):
                per_seed[name][key].append(float(value))
    metrics_by_lambda = {k: {name: float(np.mean(per_seed[name][k]))
                             for name in ("accuracy", "negation_accuracy", "plain_accuracy", "test_loss")}
                         for k in keys}
    main = keys[-1]                              # the λ asked for
    return {
        "family": "gpt", "aux_lm": float(aux_lm), "pool": pool, "seeds": seeds, "lambdas": lambdas,
        "loss_measure": "held-out task loss: mean cross-entropy of the test labels (L2), mean over seeds; "
                        "initial = before fine-tuning, final = after fine-tuning with λ = aux_lm",
        "initial_loss": float(np.mean(initial_losses)),
        "final_loss": metrics_by_lambda[main]["test_loss"],
        "metrics": metrics_by_lambda[main],
        "metrics_by_lambda": metrics_by_lambda,
        "baselines": {name: float(np.mean([b[name] for b in baselines])) for name in baselines[0]},
        "accuracy": per_seed["accuracy"], "negation_accuracy": per_seed["negation_accuracy"],
        "plain_accuracy": per_seed["plain_accuracy"],
        "mean_accuracy": {k: float(np.mean(v)) for k, v in per_seed["accuracy"].items()},
        "std_accuracy": {k: float(np.std(v)) for k, v in per_seed["accuracy"].items()},
        "initial_test_loss": initial_losses, "test_loss": per_seed["test_loss"],
        "train_loss_first": per_seed["train_loss_first"], "train_loss_last": per_seed["train_loss_last"],
        "baselines_per_seed": {name: [b[name] for b in baselines] for name in baselines[0]},
        "steps": steps, "pretrain_steps": pretrain_steps, "n_train": n_train, "n_test": n_test,
        "seconds": round(time.time() - t0, 1),
    }


def format_gpt_report(r: dict) -> str:
    """The text ``minilm finetune --family gpt`` prints: accuracy and held-out task loss per λ (per seed
    and on average), beside the bag-of-words and majority-class baselines."""
    b = r["baselines"]
    lines = [f"GPT-1 fine-tuning on sentiment with negation (pool={r['pool']}, {r['n_train']} labelled / "
             f"{r['n_test']} test sentences), pre-trained {r['pretrain_steps']} steps, fine-tuned {r['steps']} steps, "
             f"seeds {r['seeds']}",
             f"  held-out task loss before fine-tuning: {r['initial_loss']:.3f} (chance: log 2 = 0.693)"]
    for lam in r["lambdas"]:
        key = str(lam)
        m = r["metrics_by_lambda"][key]
        per_seed = " ".join(f"{a:.1%}" for a in r["accuracy"][key])
        lines.append(f"  λ = {lam:<4}  accuracy {r['mean_accuracy'][key]:.1%} ± {r['std_accuracy'][key]:.1%}"
                     f"   (seeds: {per_seed}; negated: {m['negation_accuracy']:.1%}); "
                     f"held-out loss {m['test_loss']:.3f}")
    lines.append(f"  bag of words: accuracy {b['bow_accuracy']:.1%} (negated: {b['bow_negation_accuracy']:.1%}); "
                 f"held-out loss {b['bow_loss']:.3f}")
    lines.append(f"  majority class: accuracy {b['majority_accuracy']:.1%}; held-out loss {b['majority_loss']:.3f}")
    if len(r["lambdas"]) == 2:
        a, c = (str(lam) for lam in r["lambdas"])
        gap = r["mean_accuracy"][c] - r["mean_accuracy"][a]
        lines.append(f"L3 = L2 + {r['lambdas'][1]}·L1 vs L2 alone: {100 * gap:+.1f} points on average")
    best = max(r["mean_accuracy"].values())
    verdict = "beats" if best > b["bow_accuracy"] else "does NOT beat"
    lines.append(f"the fine-tuned GPT (best λ) {verdict} the bag of words by {100 * (best - b['bow_accuracy']):+.1f} "
                 f"points ({100 * (r['metrics']['negation_accuracy'] - b['bow_negation_accuracy']):+.1f} on the "
                 f"negated sentences with λ = {r['lambdas'][-1]})")
    return "\n".join(lines)
