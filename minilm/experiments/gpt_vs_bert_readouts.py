"""How gpt-vs-bert reads a pre-trained GPT or BERT on its two sentence tasks (sentiment with
negation, three-way entailment): a softmax-regression probe on frozen features (ELMo's way), or a
copy of the model fine-tuned with a new linear layer (GPT-1's and BERT's way); and the bag-of-words
references. The token-level agreement task is in gpt_vs_bert_tokens.py, the cloze in
gpt_vs_bert_cloze.py, the pre-training and the table in gpt_vs_bert.py.

Features of a frozen model, per layer: the summary token's state — BERT's [CLS]; GPT's last real
token, the only one that has read the whole input — beside the mean over the real tokens.
BERT reads a pair with the segment ids it was pre-trained with (A = 0, B = 1); GPT has none.
"""
from __future__ import annotations

import numpy as np

from autograd import no_grad
from autograd.errors import MiniLMError


# ---- features of a frozen model -----------------------------------------------------------------------

def layer_states(family: str, model, ids, mask, segments=None) -> list:
    """The output of every block, (B, T, C) each (GPT's last after ``ln_f``, as its LM head reads it).
    ``segments``: BERT's segment ids (sentence A / B of a pair, as in its pre-training); GPT has none."""
    from minilm.blocks import causal_mask, embed_inputs
    if family == "bert":
        return model.bert(ids, segments, mask, output_hidden_states=True)["hidden_states"][1:]
    x, m, states = embed_inputs(ids, model.wte.weight, model.wpe.weight), causal_mask(ids.shape[1]), []
    for block in model.blocks:
        x = block(x, mask=m)
        states.append(x)
    states[-1] = model.ln_f(x)
    return states


def frozen_features(family: str, model, ids, mask, batch: int = 256, segments=None) -> np.ndarray:
    """(N, 2·L·C): per layer, the summary token's state (BERT: [CLS]; GPT: the last real token, the
    only one that has read the whole input) beside the mean over the real tokens; layers concatenated."""
    out = []
    with no_grad():
        for i in range(0, len(ids), batch):
            x, m = ids[i:i + batch], mask[i:i + batch]
            segs = None if segments is None else segments[i:i + batch]
            w = m.astype(np.float64)[..., None]                                        # (N, T, 1)
            last = m.sum(1).astype(int) - 1                                            # (N,)
            parts = []
            for h in layer_states(family, model, x, m, segs):
                h = np.asarray(h.data, dtype=np.float64)                               # (N, T, C)
                summary = h[:, 0] if family == "bert" else h[np.arange(len(h)), last]
                parts += [summary, (h * w).sum(1) / w.sum(1)]
            out.append(np.concatenate(parts, axis=1))
    return np.concatenate(out)


# ---- the downstream data (the same for every condition of a seed) ---------------------------------------

def task_data(tokenizer, settings: dict, seed: int) -> dict:
    """Both tasks encoded with ``tokenizer``: ``(ids, mask, labels)`` for train and test, the
    entailment pairs' segment ids (``segments``: train, test; BERT reads them as in pre-training), the
    sentiment test's ``negated`` flags, and the texts for the bag-of-words references."""
    from minilm.downstream.finetune import encode_texts, sentiment_split
    from minilm.experiments.electra_common import entailment_pairs
    T = settings["seq_len"]
    s_train, s_test = sentiment_split(seed, settings["sentiment_train"], settings["test"])
    rng = np.random.default_rng([seed, 77])
    e_train, e_test = (entailment_pairs(tokenizer, n, rng) for n in (settings["entail_train"], settings["test"]))
    if e_train[0].shape[1] > T or e_test[0].shape[1] > T:
        raise MiniLMError(f"gpt-vs-bert: an entailment pair has {max(e_train[0].shape[1], e_test[0].shape[1])} tokens, "
                          f"more than seq_len={T}; raise --seq-len")
    return {"sentiment": {"train": (*encode_texts(tokenizer, [e.text for e in s_train], T),
                                    np.array([e.label for e in s_train])),
                          "test": (*encode_texts(tokenizer, [e.text for e in s_test], T),
                                   np.array([e.label for e in s_test])),
                          "texts": ([e.text for e in s_train], [e.text for e in s_test])},
            "entailment": {"train": e_train[:3], "test": e_test[:3],
                           "segments": tuple(pair_segments(tokenizer, e[3], e[0].shape[1]) for e in (e_train, e_test))},
            "negated": np.array([e.negated for e in s_test])}


def pair_segments(tokenizer, pairs, T: int) -> np.ndarray:
    """(N, T) segment ids of ``[CLS] premise [SEP] hypothesis [SEP]`` (0 for A, 1 for B; 0 on padding)."""
    from minilm.data import pad_batch
    return pad_batch([tokenizer.encode_pair(a, b)[1] for a, b in pairs], 0, T)[0]


def _scores(correct_sentiment: np.ndarray, correct_entailment: np.ndarray, negated: np.ndarray) -> dict:
    return {"sentiment": float(correct_sentiment.mean()), "sentiment_negated": float(correct_sentiment[negated].mean()),
            "entailment": float(correct_entailment.mean())}


def probe_scores(family: str, model, data: dict) -> dict:
    """A softmax regression on the frozen features, per task; the correct/incorrect of each test example."""
    from minilm.downstream.probe import fit_softmax_regression, PROBE_L2, PROBE_LR, PROBE_STEPS
    correct = {}
    for task in ("sentiment", "entailment"):
        (xi, xm, y), (ti, tm, ty) = data[task]["train"], data[task]["test"]
        xs, ts = data[task]["segments"] if family == "bert" and "segments" in data[task] else (None, None)
        a, b = frozen_features(family, model, xi, xm, segments=xs), frozen_features(family, model, ti, tm, segments=ts)
        mu, sd = a.mean(0), a.std(0) + 1e-6                                  # probe_accuracy's standardising
        W, bias = fit_softmax_regression((a - mu) / sd, y, int(max(y.max(), ty.max())) + 1, steps=PROBE_STEPS,
                                         lr=PROBE_LR, l2=PROBE_L2)
        correct[task] = (((b - mu) / sd) @ W + bias).argmax(1) == ty
    return _scores(correct["sentiment"], correct["entailment"], data["negated"])


def finetune_scores(family: str, model, data: dict, settings: dict, seed: int) -> dict:
    """A copy of the pre-trained model fine-tuned per task (every weight and a new linear layer)."""
    correct = {}
    for k, task in enumerate(("sentiment", "entailment")):
        (xi, xm, y), (ti, tm, ty) = data[task]["train"], data[task]["test"]
        n_labels = int(max(y.max(), ty.max())) + 1
        run = dict(steps=settings["ft_steps"], batch_size=32, lr=settings["ft_lr"], seed=[seed, 50 + k])
        if family == "gpt":
            from minilm.downstream.gpt_finetune import GPTForSequenceClassification, finetune_gpt, gpt_accuracy
            from minilm.models.gpt import GPT
            gpt = GPT(model.config, rng=np.random.default_rng(0))
            gpt.load_state_dict(model.state_dict())
            clf = GPTForSequenceClassification(gpt, n_labels, rng=np.random.default_rng([seed, 40 + k]), pool="last")
            finetune_gpt(clf, xi, xm, y, aux_weight=settings["aux_lm"], **run)
            correct[task] = gpt_accuracy(clf, ti, tm, ty)
        else:
            from minilm.downstream.finetune import bert_classifier, classification_accuracy, finetune_classifier
            xs, ts = data[task].get("segments", (None, None))
            clf = bert_classifier(model.bert, n_labels, seed=[seed, 40 + k], pool="cls")
            finetune_classifier(clf, xi, xm, y, segment_ids=xs, **run)
            correct[task] = classification_accuracy(clf, ti, tm, ty, segment_ids=ts)
    return _scores(correct["sentiment"], correct["entailment"], data["negated"])


def reference_scores(data: dict, seed: int, settings: dict) -> dict:
    from minilm.downstream.baselines import text_baselines
    from minilm.experiments.electra_common import bag_of_words_accuracy
    s = data["sentiment"]
    (train_texts, test_texts), y_train, y_test = s["texts"], s["train"][2], s["test"][2]
    bow = text_baselines(train_texts, y_train, test_texts, y_test, data["negated"])
    entail = bag_of_words_accuracy(seed, {"probe_train": settings["entail_train"], "probe_test": settings["test"]})
    return {"sentiment": bow["bow_accuracy"], "sentiment_negated": bow["bow_negation_accuracy"], "entailment": entail}
