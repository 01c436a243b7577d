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

    from minilm.downstream.gpt_finetune import GPTFinetuneConfig, run_gpt_finetune
    r = run_gpt_finetune(GPTFinetuneConfig(aux_lm=0.5, pool="last", seeds=(0, 1, 2)))
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
from dataclasses import dataclass

import numpy as np

import autograd.functional as F
from autograd import nn, no_grad, tasks
from autograd.errors import ConfigError, ShapeError
from minilm.downstream.baselines import text_baselines
from minilm.blocks import causal_mask, check_token_ids, embed_inputs
from minilm.data import pad_batch, synthetic_corpus
from minilm.downstream.finetune import sentiment_split
from minilm.models.gpt import GPT, GPTConfig
from minilm.tokenizers import WordPieceTokenizer
from minilm.train import fit, short_run

# Task 12.1: solutions/task12_beyond/aux_lm.py
gpt_finetune_loss = tasks.bind("task12_beyond.aux_lm", "gpt_finetune_loss")
sequence_representation = tasks.bind("task12_beyond.aux_lm", "sequence_representation")

__all__ = ["GPTForSequenceClassification", "lm_loss_padded", "pretrain_gpt", "finetune_gpt", "gpt_accuracy",
           "gpt_evaluate", "text_baselines", "GPTFinetuneConfig", "run_gpt_finetune", "POOLING"]

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
    return fit(gpt, loss_fn, short_run(steps, lr, seed), name="GPT pre-training", progress=progress)


def finetune_gpt(model: GPTForSequenceClassification, ids, mask, labels, *, aux_weight, steps, batch_size, lr,
                 seed, progress=False) -> list[float]:
    """L3 = L2 + λ·L1 on the labelled rows; returns the losses."""
    labels = np.asarray(labels)

    def loss_fn(rng):
        idx = rng.integers(0, len(labels), size=batch_size)
        T = int(mask[idx].sum(axis=1).max())                  # cut the batch to its longest row
        return model(ids[idx, :T], mask[idx, :T], labels[idx], aux_weight=aux_weight)["loss"]
    return fit(model, loss_fn, short_run(steps, lr, seed), name=f"fine-tuning (λ={aux_weight})", progress=progress)


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


@dataclass
class GPTFinetuneConfig:
    aux_lm: float = 0.5           # λ in L3 = L2 + λ·L1; every seed runs λ = 0 and this λ (the paper's 0.5)
    pool: str = "last"            # the sequence vector: the extract token's state (GPT-1's), or mean / max
    seeds: tuple[int, ...] = (0, 1, 2)  # one pre-training per seed, then one fine-tuning per λ from it
    steps: int = 300              # fine-tuning steps
    pretrain_steps: int = 300     # LM pre-training steps (L1); 0 = fine-tune a random GPT
    batch_size: int = 32          # sentences per step
    lr: float = 1e-3              # fine-tuning peak learning rate (AdamW, warm-up then linear decay)
    pretrain_lr: float = 2e-3     # pre-training peak learning rate
    n_docs: int = 300             # synthetic documents to pre-train on
    n_train: int = N_TRAIN        # labelled training sentences (half negated)
    n_test: int = 1000            # labelled test sentences
    vocab_size: int = 500         # WordPiece vocabulary (trained on the corpus and the training sentences)
    n_layer: int = 2              # GPT size: small enough for a laptop CPU in a few minutes
    n_head: int = 2
    n_embd: int = 64
    block_size: int = 32          # tokens per row, [CLS] and [SEP] included (the rest is cut)
    dropout: float = 0.1          # GPT's dropout, in pre-training and fine-tuning

    def __post_init__(self):
        if self.aux_lm < 0:
            raise ConfigError(f"GPTFinetuneConfig: aux_lm={self.aux_lm}, expected λ >= 0")
        if self.pool not in POOLING:
            raise ConfigError(f"GPTFinetuneConfig: pool={self.pool!r}, expected one of {POOLING}")
        self.seeds = tuple(int(s) for s in self.seeds)
        if not self.seeds:
            raise ConfigError("GPTFinetuneConfig: seeds is empty; give at least one")
        for name in ("steps", "batch_size", "n_train", "n_test"):
            if getattr(self, name) < 1:
                raise ConfigError(f"GPTFinetuneConfig: {name}={getattr(self, name)}, expected >= 1")

    @property
    def lambdas(self) -> list[float]:
        return [0.0] if self.aux_lm == 0 else [0.0, float(self.aux_lm)]


PER_SEED = ("accuracy", "negation_accuracy", "plain_accuracy", "test_loss", "train_loss_first", "train_loss_last")
METRICS = ("accuracy", "negation_accuracy", "plain_accuracy", "test_loss")


def _seed_data(cfg: GPTFinetuneConfig, seed: int) -> dict:
    """One seed's sentences, tokenizer and encoded rows (``ids_*``, ``mask_*`` (N, T)), labels and
    the ``text_baselines`` on them."""
    train, test = sentiment_split(seed, cfg.n_train, cfg.n_test)
    docs = synthetic_corpus(cfg.n_docs, rng=np.random.default_rng([seed, 2]))
    corpus, train_texts, test_texts = [s for d in docs for s in d], [e.text for e in train], [e.text for e in test]
    tok = WordPieceTokenizer.train(corpus + train_texts, cfg.vocab_size)
    d = {"tokenizer": tok, "corpus": corpus, "train_texts": train_texts,
         "y_train": np.array([e.label for e in train]), "y_test": np.array([e.label for e in test]),
         "negated": np.array([e.negated for e in test])}
    d["ids_train"], d["mask_train"] = _encode(tok, train_texts, cfg.block_size)
    d["ids_test"], d["mask_test"] = _encode(tok, test_texts, cfg.block_size)
    d["baselines"] = text_baselines(train_texts, d["y_train"], test_texts, d["y_test"], d["negated"])
    return d


def _pretrained_state(cfg: GPTFinetuneConfig, seed: int, d: dict, progress: bool) -> tuple[GPTConfig, dict]:
    """``(GPTConfig, state_dict)`` of the GPT that every λ of ``seed`` starts from."""
    tok = d["tokenizer"]
    config = GPTConfig(vocab_size=tok.vocab_size, block_size=cfg.block_size, n_layer=cfg.n_layer, n_head=cfg.n_head,
                       n_embd=cfg.n_embd, dropout=cfg.dropout, seed=seed)
    base = GPT(config, rng=np.random.default_rng([seed, 3]))
    if cfg.pretrain_steps:
        # the unlabelled task sentences join the corpus, as BooksCorpus covers the language of GPT-1's
        # tasks: without them L1 starts near 6 nats on the task's unseen words and swamps L2
        ids_c, m_c = _encode(tok, d["corpus"] + d["train_texts"], cfg.block_size)
        if progress:
            print(f"seed {seed}: pre-training GPT on {len(ids_c)} sentences", file=sys.stderr, flush=True)
        pretrain_gpt(base, ids_c, m_c, steps=cfg.pretrain_steps, batch_size=cfg.batch_size, lr=cfg.pretrain_lr,
                     seed=[seed, 4], progress=progress)
    return config, base.state_dict()


def _classifier(cfg: GPTFinetuneConfig, seed: int, config: GPTConfig, state: dict) -> GPTForSequenceClassification:
    """A fresh copy of the pre-trained GPT with a new head W_y: the start of every λ of ``seed``."""
    gpt = GPT(config, rng=np.random.default_rng([seed, 3]))
    gpt.load_state_dict(state)
    return GPTForSequenceClassification(gpt, 2, rng=np.random.default_rng([seed, 5]), pool=cfg.pool)


def _finetune_one(cfg: GPTFinetuneConfig, seed: int, d: dict, clf, lam: float, progress: bool) -> dict:
    """Fine-tune ``clf`` with λ = ``lam``; returns its :data:`PER_SEED` numbers."""
    losses = finetune_gpt(clf, d["ids_train"], d["mask_train"], d["y_train"], aux_weight=lam, steps=cfg.steps,
                          batch_size=cfg.batch_size, lr=cfg.lr, seed=[seed, 6], progress=progress)
    correct, test_loss = gpt_evaluate(clf, d["ids_test"], d["mask_test"], d["y_test"])
    negated = d["negated"]
    values = (correct.mean(), correct[negated].mean(), correct[~negated].mean(), test_loss, losses[0],
              np.mean(losses[-20:]))
    return {name: float(v) for name, v in zip(PER_SEED, values)}


def run_gpt_finetune(cfg: GPTFinetuneConfig, *, progress: bool = True) -> dict:
    """Fine-tune with λ = 0 and λ = ``cfg.aux_lm`` from the same pre-trained GPT, for every seed.

    Returns the numbers ``minilm finetune --family gpt --aux-lm λ --json`` prints:

    * ``initial_loss`` / ``final_loss``: the held-out task loss (mean cross-entropy of the test labels)
      before fine-tuning and after fine-tuning with λ = ``aux_lm``, means over seeds;
    * ``metrics``: accuracy, negation_accuracy, plain_accuracy and test_loss with λ = ``aux_lm``
      (means over seeds), and ``metrics_by_lambda`` the same for every λ run;
    * ``baselines``: the bag of words and the majority class (``text_baselines``), means over seeds;
    * per λ (keys ``"0.0"`` and ``f"{aux_lm}"``): the test accuracies per seed (``accuracy``), their
      mean and standard deviation, the accuracy on the negated sentences, the held-out and the
      training losses per seed."""
    t0 = time.time()
    keys = [str(lam) for lam in cfg.lambdas]
    per_seed = {name: {k: [] for k in keys} for name in PER_SEED}
    initial_losses, baselines = [], []
    for seed in cfg.seeds:
        d = _seed_data(cfg, seed)
        baselines.append(d["baselines"])
        config, state = _pretrained_state(cfg, seed, d, progress)
        for lam, key in zip(cfg.lambdas, keys):      # the same start, data and seed: only λ differs
            clf = _classifier(cfg, seed, config, state)
            if key == keys[0]:                        # before fine-tuning: the same model for every λ
                initial_losses.append(gpt_evaluate(clf, d["ids_test"], d["mask_test"], d["y_test"])[1])
            for name, value in _finetune_one(cfg, seed, d, clf, lam, progress).items():
                per_seed[name][key].append(value)
    return {**_summary(cfg, per_seed, initial_losses, baselines), "seconds": round(time.time() - t0, 1)}


def _summary(cfg: GPTFinetuneConfig, per_seed: dict, initial_losses: list, baselines: list) -> dict:
    keys = list(per_seed["accuracy"])
    by_lambda = {k: {name: float(np.mean(per_seed[name][k])) for name in METRICS} for k in keys}
    main = keys[-1]                              # the λ asked for
    return {
        "family": "gpt", "aux_lm": float(cfg.aux_lm), "pool": cfg.pool, "seeds": list(cfg.seeds),
        "lambdas": cfg.lambdas,
        "loss_measure": "held-out task loss: mean cross-entropy of the test labels (L2), mean over seeds; "
                        "initial = before fine-tuning, final = after fine-tuning with λ = aux_lm",
        "initial_loss": float(np.mean(initial_losses)),
        "final_loss": by_lambda[main]["test_loss"],
        "metrics": by_lambda[main],
        "metrics_by_lambda": by_lambda,
        "baselines": {name: float(np.mean([b[name] for b in baselines])) for name in baselines[0]},
        "accuracy": per_seed["accuracy"], "negation_accuracy": per_seed["negation_accuracy"],
        "plain_accuracy": per_seed["plain_accuracy"],
        "mean_accuracy": {k: float(np.mean(v)) for k, v in per_seed["accuracy"].items()},
        "std_accuracy": {k: float(np.std(v)) for k, v in per_seed["accuracy"].items()},
        "initial_test_loss": initial_losses, "test_loss": per_seed["test_loss"],
        "train_loss_first": per_seed["train_loss_first"], "train_loss_last": per_seed["train_loss_last"],
        "baselines_per_seed": {name: [b[name] for b in baselines] for name in baselines[0]},
        "steps": cfg.steps, "pretrain_steps": cfg.pretrain_steps, "n_train": cfg.n_train, "n_test": cfg.n_test,
    }
