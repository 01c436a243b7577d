"""gpt-vs-bert's token-level task: a label that only the words to the right of a token decide.

BERT §5.1 (Devlin et al. 2019, Table 5) explains why the left-to-right model loses most on SQuAD
(F1 77.8 against 87.9 for the masked LM, both without NSP): SQuAD's answer span is read from each
token's own state, and "the token-level hidden states have no right-side context"; a BiLSTM on top
of the LTR model recovers part of it. Sentence tasks hide that, because a left-to-right model's last
state has read the whole input.

The miniature's token-level task is subject–verb agreement read at the subject (the synthetic
``agreement_probes(target="noun")``)::

    [CLS] the [MASK] next to the houses runs . [SEP]        label: singular (the verb says so)

The subject is hidden, so its number is written only in the verb, to its right, past an attractor
of the other number half of the time. The label is read from the state at the [MASK] position, in
both readouts: a linear probe of the frozen states (every layer's state there, concatenated) and
fine-tuning (every weight, plus one linear layer on the final state there; GPT keeps its auxiliary
LM loss, as for the sentence tasks). A left-to-right model's state at the blank has read only
``[CLS] the``: it can do no better than chance, by construction, and that is the paper's point.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd import nn, no_grad
from minilm.data import pad_batch

PLURAL = 1   # the label of a plural subject; 0: singular


def plural_nouns() -> set:
    """Every plural subject noun of the synthetic topics."""
    from minilm.data.synthetic import TOPICS
    return {plural for topic in TOPICS.values() for _, plural in topic.subjects}


def agreement_split(tokenizer, n: int, rng: np.random.Generator) -> dict:
    """``n`` agreement rows: ``ids``, ``mask`` (N, T), ``positions`` (N,) of the hidden subject,
    ``labels`` (N,) (1 = plural) and ``texts`` (the sentence without its subject, for the
    bag-of-words reference)."""
    from minilm.data.synthetic import agreement_probes
    plurals = plural_nouns()
    rows, positions, labels, texts = [], [], [], []
    for probe in agreement_probes(n, rng=rng, target="noun"):
        left, right = probe.words[:probe.index], probe.words[probe.index + 1:]
        body = tokenizer.encode(" ".join(left)) + [tokenizer.mask_id] + tokenizer.encode(" ".join(right))
        ids = tokenizer.build_inputs(body)[0]                       # [CLS] … [SEP]
        rows.append(ids)
        positions.append(ids.index(tokenizer.mask_id))
        labels.append(PLURAL if probe.answer in plurals else 1 - PLURAL)
        texts.append(" ".join(left + right))
    ids, mask = pad_batch(rows, tokenizer.pad_id)
    return {"ids": ids, "mask": mask, "positions": np.array(positions), "labels": np.array(labels),
            "texts": texts}


def agreement_data(tokenizer, settings: dict, seed: int) -> dict:
    """The train and test rows of one seed (the same for every condition of it)."""
    rng = np.random.default_rng([seed, 83])
    return {"train": agreement_split(tokenizer, settings["agreement_train"], rng),
            "test": agreement_split(tokenizer, settings["test"], rng)}


def token_features(family: str, model, split: dict, batch: int = 256) -> np.ndarray:
    """(N, L·C): every block's output at each row's position, layers concatenated (frozen)."""
    from minilm.experiments.gpt_vs_bert_readouts import layer_states
    out = []
    with no_grad():
        for i in range(0, len(split["ids"]), batch):
            ids, mask = split["ids"][i:i + batch], split["mask"][i:i + batch]
            rows = np.arange(len(ids))
            pos = split["positions"][i:i + batch]
            out.append(np.concatenate([np.asarray(h.data, dtype=np.float64)[rows, pos]
                                       for h in layer_states(family, model, ids, mask)], axis=1))
    return np.concatenate(out)


def probe_accuracy(family: str, model, data: dict) -> float:
    """A softmax regression on the frozen states at the hidden subject."""
    from minilm.downstream.probe import PROBE_L2, PROBE_LR, PROBE_STEPS, fit_softmax_regression
    a, b = token_features(family, model, data["train"]), token_features(family, model, data["test"])
    mu, sd = a.mean(0), a.std(0) + 1e-6
    W, bias = fit_softmax_regression((a - mu) / sd, data["train"]["labels"], 2, steps=PROBE_STEPS, lr=PROBE_LR,
                                     l2=PROBE_L2)
    return float(((((b - mu) / sd) @ W + bias).argmax(1) == data["test"]["labels"]).mean())


class TokenClassifier(nn.Module):
    """A copy of a pre-trained network and one new linear layer on the final state at one position
    per row: ``logits = W h_L[b, positions[b]] + c`` (B, 2). For GPT, ``aux_weight`` adds its LM
    loss on the rows (GPT-1 §3.2: L2 + λ·L1)."""

    def __init__(self, family: str, model, *, seed, aux_weight: float = 0.0):
        super().__init__()
        self.family, self.aux_weight = family, float(aux_weight)
        if family == "gpt":
            from minilm.downstream.gpt_finetune import GPTForSequenceClassification
            from minilm.models.gpt import GPT
            gpt = GPT(model.config, rng=np.random.default_rng(0))
            gpt.load_state_dict(model.state_dict())
            self.network = GPTForSequenceClassification(gpt, 2, rng=np.random.default_rng([seed, 1]))  # its states
            width = model.config.n_embd
        else:
            from minilm.downstream.finetune import bert_classifier
            self.network = bert_classifier(model.bert, 2, seed=seed).bert
            width = model.bert.config.n_embd
        self.classifier = nn.Linear(width, 2, rng=np.random.default_rng([seed, 2]), init_std=0.02)

    def forward(self, ids, mask, positions, labels=None) -> dict:
        if self.family == "gpt":
            h = self.network.hidden_states(ids)                               # (B, T, C)
        else:
            h = self.network(ids, None, mask)["last_hidden_state"]            # (B, T, C)
        logits = self.classifier(h[np.arange(len(ids)), np.asarray(positions)])   # (B, 2)
        if labels is None:
            return {"logits": logits}
        loss = F.cross_entropy(logits, np.asarray(labels))
        if self.family == "gpt" and self.aux_weight:
            from minilm.downstream.gpt_finetune import lm_loss_padded
            loss = loss + self.aux_weight * lm_loss_padded(h @ self.network.gpt.wte.weight.T, ids, mask)
        return {"logits": logits, "loss": loss}


def finetune_accuracy(family: str, model, data: dict, settings: dict, seed: int) -> float:
    """Fine-tune a :class:`TokenClassifier` (every weight) on the train rows; its test accuracy."""
    from minilm.train import fit, short_run
    clf = TokenClassifier(family, model, seed=[seed, 60], aux_weight=settings["aux_lm"] if family == "gpt" else 0.0)
    train = data["train"]

    def loss_fn(step_rng):
        idx = step_rng.integers(0, len(train["labels"]), size=32)
        T = int(train["mask"][idx].sum(axis=1).max())                       # cut to the longest row
        return clf(train["ids"][idx, :T], train["mask"][idx, :T], train["positions"][idx],
                   labels=train["labels"][idx])["loss"]

    fit(clf, loss_fn, short_run(settings["ft_steps"], settings["ft_lr"], [seed, 61]), name="fine-tuning",
        progress=False)
    clf.eval()
    test = data["test"]
    with no_grad():
        logits = clf(test["ids"], test["mask"], test["positions"])["logits"].data
    return float((logits.argmax(-1) == test["labels"]).mean())


def reference_accuracy(data: dict) -> float:
    """A bag-of-words logistic regression on the sentence without its subject: it reads the verb's
    form wherever it is, which is all the task asks."""
    from minilm.downstream.baselines import BagOfWordsClassifier
    bow = BagOfWordsClassifier().fit(data["train"]["texts"], data["train"]["labels"])
    return float((bow.predict_proba(data["test"]["texts"]).argmax(-1) == data["test"]["labels"]).mean())
