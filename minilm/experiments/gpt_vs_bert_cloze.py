"""gpt-vs-bert's cloze: how well each pre-trained model knows its words, read the way each model can.

One word of each held-out sentence is blanked, and the model chooses it among ``cloze_candidates``
whole words of the vocabulary (the right one and others drawn at random; chance is 1 / candidates):

    BERT   the sentence with [MASK] in the blank; the candidates ranked by the MLM logits there,
           p(w | x_<t, x_>t): both sides of the blank, as BERT was pre-trained (Devlin et al. 2019, §3.1)
    GPT    each candidate written into the blank and the whole sentence scored left to right,
           Σ_t log p(x_t | x_<t): the words after the blank count through their likelihood
    reference   always the candidate most frequent in the training text

The cloze tells which model is further along in pre-training; the tasks say what that buys.
"""
from __future__ import annotations

import numpy as np

from autograd import no_grad
from minilm.data import pad_batch


def items(tokenizer, sentences, settings: dict, seed: int) -> list[tuple[list[int], int, list[int]]]:
    """``(ids of [CLS] sentence [SEP], blank position, candidate ids with the right one first)`` per
    held-out sentence that has a whole-word token (not a ## piece, not followed by one, not punctuation)."""
    vocab = tokenizer.convert_ids_to_tokens(list(range(tokenizer.vocab_size)))
    special = set(tokenizer.special_ids)
    whole = lambda i: i not in special and vocab[i].isalpha()  # noqa: E731
    pool = np.array([i for i in range(tokenizer.vocab_size) if whole(i)])
    rng = np.random.default_rng([seed, 31])
    out = []
    for s in sentences:
        ids = tokenizer.encode(s, add_special_tokens=True)
        if len(ids) > settings["seq_len"]:
            continue
        spots = [t for t in range(1, len(ids) - 1) if whole(ids[t]) and not vocab[ids[t + 1]].startswith("##")]
        if not spots:
            continue
        t = int(spots[rng.integers(len(spots))])
        others = rng.choice(pool[pool != ids[t]], size=settings["cloze_candidates"] - 1, replace=False)
        out.append((ids, t, [ids[t], *map(int, others)]))
        if len(out) == settings["cloze_sentences"]:
            break
    return out


def bert(model, tokenizer, items) -> float:
    """BERT: the [MASK]ed sentence, the candidates ranked by the MLM logits at the blank."""
    rows = [ids[:t] + [tokenizer.mask_id] + ids[t + 1:] for ids, t, _ in items]
    x, m = pad_batch(rows, tokenizer.pad_id)
    with no_grad():
        logits = model(x, None, m)["mlm_logits"].data                         # (N, T, V)
    right = [int(np.argmax(logits[n, t, c]) == 0) for n, (_, t, c) in enumerate(items)]
    return float(np.mean(right))


def gpt(model, tokenizer, items) -> float:
    """GPT: every candidate put in the blank, the completed sentence scored left to right
    (Σ_t log p(x_t | x_<t)); the likeliest wins."""
    right = []
    with no_grad():
        for ids, t, cands in items:
            x, m = pad_batch([ids[:t] + [c] + ids[t + 1:] for c in cands], tokenizer.pad_id)   # (K, T)
            logits, _ = model(x)
            z = logits.data[:, :-1].astype(np.float64)                         # (K, T-1, V)
            logp = z - z.max(-1, keepdims=True)
            logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
            tok = np.take_along_axis(logp, x[:, 1:, None], axis=-1)[..., 0]   # (K, T-1)
            right.append(int(np.argmax((tok * m[:, 1:]).sum(1)) == 0))
    return float(np.mean(right))


def frequency(tokenizer, train_ids, items) -> float:
    """The reference: always the candidate most frequent in the training text."""
    counts = np.bincount(np.asarray(train_ids).ravel(), minlength=tokenizer.vocab_size)
    return float(np.mean([int(np.argmax(counts[c]) == 0) for _, _, c in items]))
