"""The bake-off's readout: the network of each family a downstream task would use, its inputs in the
family's own layout, the frozen-feature probes on the sentiment and entailment tasks, and the
fine-tuned entailment readout (the protocol is in minilm/experiments/bakeoff.py's docstring).
Letters: N examples, T tokens, H width, B batch, K classes."""
from __future__ import annotations

from typing import Optional

import numpy as np

import autograd.functional as F
from autograd import nn, no_grad
from autograd.errors import ConfigError
from minilm.downstream.probe import probe_accuracy
from minilm.experiments.electra_common import TWO_FINETUNE_LRS as FINETUNE_LRS  # the better on dev is kept
from minilm.experiments.electra_common import sentence_features, unseen_words

RANDOM, GPT, BERT, ROBERTA, ELECTRA, XLNET, T5, BART, DEBERTA, STUDENT = (
    "random BERT (no pre-training)", "GPT", "BERT", "RoBERTa", "ELECTRA", "XLNet", "T5 encoder", "BART encoder",
    "DeBERTa", "DistilBERT student")


def encoder(condition: str, model):
    """``encode(ids, mask) -> (N, T, H)``: the network of ``model`` a downstream task would use."""
    from minilm.blocks import causal_mask, embed_inputs, padding_mask
    if condition == GPT:
        def gpt(ids, mask):
            x = embed_inputs(ids, model.wte.weight, model.wpe.weight)
            return model.run_blocks(x, causal_mask(ids.shape[1]) & padding_mask(mask))
        return gpt
    if condition in (BERT, RANDOM, STUDENT):
        return lambda ids, mask: model.bert(ids, None, mask)["last_hidden_state"]
    if condition in (ROBERTA, ELECTRA, T5, BART):
        return model.encode
    if condition == XLNET:
        def content_stream(ids, mask):        # fine-tuning's view: nothing masked, only padding keys
            h = model.word_embedding(ids) + model.position_embedding(ids.shape[1])
            for block in model.layer:
                h = block(h, mask=padding_mask(mask))
            return model.ln_f(h)
        return content_stream
    if condition == DEBERTA:
        return lambda ids, mask: model(ids, mask)["hidden_states"][-1]
    raise ConfigError(f"bakeoff: no encoder for {condition!r}")


def pair_ids(condition: str, tokenizer, a: str, b: Optional[str], max_len: int) -> list[int]:
    """One probe input in the family's layout, cut to ``max_len`` tokens."""
    if condition == GPT:                      # GPT never saw [CLS]: text [SEP] (text [SEP])
        ids = tokenizer.encode(a) + [tokenizer.sep_id]
        if b is not None:
            ids += tokenizer.encode(b) + [tokenizer.sep_id]
    elif b is None:
        ids = tokenizer.build_inputs(tokenizer.encode(a))[0]
    else:
        ids = tokenizer.encode_pair(a, b)[0]
    return ids[:max_len]


def features(condition: str, encode, tokenizer, texts: list, max_len: int) -> np.ndarray:
    """(N, 2H) sentence vectors: [h_first ; mean h] ([h_last ; mean h] for GPT)."""
    from minilm.data import pad_batch
    ids, mask = pad_batch([pair_ids(condition, tokenizer, a, b, max_len) for a, b in texts], tokenizer.pad_id)
    if condition != GPT:
        return sentence_features(encode, ids, mask)
    out = []
    with no_grad():
        for i in range(0, len(ids), 256):
            m = mask[i:i + 256].astype(np.float64)[..., None]                        # (N, T, 1)
            h = np.asarray(encode(ids[i:i + 256], mask[i:i + 256]).data, dtype=np.float64)  # (N, T, H)
            last = mask[i:i + 256].sum(1).astype(int) - 1
            out.append(np.concatenate([h[np.arange(len(h)), last], (h * m).sum(1) / m.sum(1)], axis=1))
    return np.concatenate(out)


def probe_tasks(seed: int, settings: dict) -> dict:
    """{task: (train texts, train labels, test texts, test labels)}, the same for every family of a seed."""
    from minilm.data import entailment_dataset, sentiment_dataset
    rng = np.random.default_rng([seed, 77])
    n, m = settings["probe_train"], settings["probe_test"]
    sent = sentiment_dataset(n + m, rng=rng)
    ent = entailment_dataset(n + m, rng=rng)
    out = {"sentiment": ([(e.text, None) for e in sent], [e.label for e in sent]),
           "entailment": ([(e.premise, e.hypothesis) for e in ent], [e.label for e in ent])}
    return {k: (x[:n], np.array(y[:n]), x[n:], np.array(y[n:])) for k, (x, y) in out.items()}


def missing_probe_words(documents, settings: dict, seed: int) -> dict:
    """``{task: share of the probe's word types that never occur in the pre-training documents}``:
    a word no family read in pre-training is only a string of sub-word pieces its encoder never
    trained on (without ``task_text``, 33 of the sentiment task's 39 types, "not" among them)."""
    out = {}
    for task, (x_train, _, x_test, _) in probe_tasks(seed, settings).items():
        unseen, types, _ = unseen_words(documents, [text for pair in list(x_train) + list(x_test) for text in pair])
        out[task] = len(unseen) / types
    return out


class FamilyClassifier(nn.Module):
    """Fine-tuning's classifier for any family: a new Linear on the state a pair's label is read from
    (the first position, [CLS] or <s>; GPT's last real token, the one that has read the whole pair:
    Radford et al. 2018, §3.3), with ``BertForSequenceClassification``'s call, so
    ``finetune_classifier`` trains every weight of ``model`` and the new layer."""

    pool = "first token (GPT: last)"

    def __init__(self, condition: str, model, num_labels: int, *, rng):
        super().__init__()
        self.condition, self.model = condition, model
        self.classifier = nn.Linear(model.config.n_embd, num_labels, rng=rng, init_std=0.02)

    def forward(self, input_ids, segment_ids=None, attention_mask=None, labels=None) -> dict:
        h = encoder(self.condition, self.model)(input_ids, attention_mask)                  # (B, T, H)
        if self.condition == GPT:
            pooled = h[np.arange(len(input_ids)), np.asarray(attention_mask).sum(1).astype(int) - 1]  # (B, H)
        else:
            pooled = h[:, 0]                                                              # (B, H)
        logits = self.classifier(pooled)                                                  # (B, K)
        return {"logits": logits, "loss": None if labels is None else F.cross_entropy(logits, labels)}


def finetuned_entailment(condition: str, model, tokenizer, seed: int, settings: dict, dev: int = 300) -> float:
    """The papers' MNLI readout, in miniature: every weight of ``model`` and a new layer
    (:class:`FamilyClassifier`) trained on the entailment probe's training pairs for
    ``finetune_steps`` steps of ``finetune_batch`` pairs at each rate of :data:`FINETUNE_LRS`; the
    rate with the best accuracy on ``dev`` other pairs is scored on the probe's test pairs
    (``finetune_at_best_rate``). ``model`` is left as it was."""
    from minilm.data import entailment_dataset, pad_batch
    from minilm.downstream.finetune import finetune_at_best_rate

    def encoded(pairs, labels):
        ids, mask = pad_batch([pair_ids(condition, tokenizer, a, b, settings["seq_len"]) for a, b in pairs],
                              tokenizer.pad_id)
        return ids, mask, np.asarray(labels)

    x_tr, y_tr, x_te, y_te = probe_tasks(seed, settings)["entailment"]
    held = entailment_dataset(dev, rng=np.random.default_rng([seed, 78]))
    dev_set = encoded([(e.premise, e.hypothesis) for e in held], [e.label for e in held])
    state = model.state_dict()

    def from_pretrained():                         # the same network, its pre-trained weights reloaded
        model.load_state_dict(state)
        return FamilyClassifier(condition, model, 3, rng=np.random.default_rng([seed, 4]))
    try:
        return finetune_at_best_rate(from_pretrained, encoded(x_tr, y_tr), dev_set, encoded(x_te, y_te),
                                     lrs=FINETUNE_LRS, steps=settings["finetune_steps"], seed=seed,
                                     batch_size=settings["finetune_batch"])[0]
    finally:
        model.load_state_dict(state)


def probe_scores(condition: str, model, tokenizer, seed: int, settings: dict) -> dict:
    model.eval()
    encode = encoder(condition, model)
    out = {}
    for task, (x_tr, y_tr, x_te, y_te) in probe_tasks(seed, settings).items():
        f_tr = features(condition, encode, tokenizer, x_tr, settings["seq_len"])
        f_te = features(condition, encode, tokenizer, x_te, settings["seq_len"])
        out[task] = probe_accuracy(f_tr, y_tr, f_te, y_te)
    return out
