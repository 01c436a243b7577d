"""The bake-off's readout: the network of each family a downstream task would use, its inputs in the
family's own layout, and the frozen-feature probes on the sentiment and entailment tasks (the
protocol is in minilm/experiments/bakeoff.py's docstring). Letters: N examples, T tokens, H width."""
from __future__ import annotations

from typing import Optional

import numpy as np

from autograd import no_grad
from autograd.errors import ConfigError
from minilm.downstream.probe import probe_accuracy
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


def probe_scores(condition: str, model, tokenizer, seed: int, settings: dict) -> dict:
    model.eval()
    encode = encoder(condition, model)
    out = {}
    for task, (x_tr, y_tr, x_te, y_te) in probe_tasks(seed, settings).items():
        f_tr = features(condition, encode, tokenizer, x_tr, settings["seq_len"])
        f_te = features(condition, encode, tokenizer, x_te, settings["seq_len"])
        out[task] = probe_accuracy(f_tr, y_tr, f_te, y_te)
    return out
