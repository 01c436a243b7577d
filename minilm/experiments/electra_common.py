"""What the two ELECTRA experiments share: pre-train one model with the ELECTRA recipe, then score
the network that would be fine-tuned with a frozen-encoder linear probe on the entailment task.

The downstream protocol (the same for ``electra-ablation`` and ``generator-size``):

1. **Pre-train** with ``minilm/recipes/electra.py`` (``objective``, ``generator_fraction``,
   ``disc_weight`` and the sizes from the plan's settings), ``minilm.train`` for ``steps`` steps.
2. **Freeze** the encoder a downstream task would use (the discriminator for ELECTRA and
   ELECTRA-15%, the main network for the MLM ablations; for the BERT row the generator, which is a
   plain masked LM) and read every premise/hypothesis pair ``[CLS] premise [SEP] hypothesis [SEP]``
   of the three-class entailment task (``minilm.data.entailment_dataset``).
3. **Probe**: a multinomial logistic regression on the sentence vector ``[h_CLS ; mean_t h_t]``
   (2H features, standardised on the training pairs), fitted by full-batch gradient descent on
   ``probe_train`` labelled pairs and scored on ``probe_test`` others. Chance is 1/3.

Why a probe and not fine-tuning: on this corpus the sentiment task saturates (a random encoder
fine-tuned on 2,000 sentences gets 100%, and its words are not in the pre-training corpus), and
fine-tuning on a few entailment pairs teaches every encoder, the random one included, which
narrows the differences (in a first check: +15 points for a pre-trained ELECTRA over a random
encoder after 100 fine-tuning steps, +35 with the probe). A frozen encoder can only offer what
pre-training put into it, which is the question of both tables; the probe is also deterministic
and takes seconds.

Letters: N examples, T tokens, H hidden size, K classes.
"""
from __future__ import annotations

import math
import tempfile

import numpy as np

from autograd import no_grad
from autograd.errors import ConfigError

PROBE_STEPS, PROBE_LR, PROBE_L2 = 300, 0.5, 1e-2


def pretrain(seed: int, settings: dict, *, steps: int | None = None, **overrides):
    """Pre-train one ELECTRA-recipe model; returns ``(recipe, held-out metrics)``.

    ``settings`` holds the sizes (``docs``, ``n_layer``, ``n_head``, ``n_embd``, ``batch_size``,
    ``max_seq_length``, ``vocab_size``) and the schedule (``steps``, ``lr``, ``warmup``);
    ``overrides`` are recipe options such as ``objective="electra15"``. ``steps=0`` builds the
    model and tokenizer without training (the "no pre-training" reference); the metrics are then {}."""
    from minilm.recipes import electra
    from minilm.train import TrainConfig, train
    sizes = {k: settings[k] for k in ("docs", "n_layer", "n_head", "n_embd", "batch_size", "max_seq_length",
                                      "vocab_size")}
    args = electra.default_args(seed=seed, **sizes, **overrides)
    recipe = electra.build(args)
    steps = int(settings["steps"] if steps is None else steps)
    if steps == 0:
        return recipe, {}
    cfg = TrainConfig(steps=steps, lr=settings["lr"], warmup=min(settings["warmup"], steps), eval_every=steps,
                      checkpoint_every=steps, seed=seed)
    with tempfile.TemporaryDirectory(prefix="minilm-electra-") as out:
        summary = train(recipe, cfg, out, progress=False, plot=False)
    return recipe, summary["metrics"]


def encoder_of(model, network: str):
    """``(encode, H)``: the function ``encode(ids, mask) -> (N, T, H)`` of one network of an
    ``Electra`` model (``"discriminator"``, the main network, or ``"generator"``) and its width."""
    if network == "discriminator":
        return model.encode, model.config.n_embd
    if network == "generator":
        return model.generator.hidden, model.config.generator_hidden
    raise ConfigError(f"encoder_of: network={network!r}, expected 'discriminator' or 'generator'")


def entailment_pairs(tokenizer, n: int, rng: np.random.Generator):
    """``n`` entailment examples as ``(ids (N, T), attention_mask (N, T), labels (N,), texts)``:
    ``[CLS] premise [SEP] hypothesis [SEP]``, padded to the longest pair; ``texts`` are the
    (premise, hypothesis) strings, for the bag-of-words reference."""
    from minilm.data import entailment_dataset, pad_batch
    examples = entailment_dataset(n, rng=rng)
    ids, mask = pad_batch([tokenizer.encode_pair(e.premise, e.hypothesis)[0] for e in examples], tokenizer.pad_id)
    return ids, mask, np.array([e.label for e in examples]), [(e.premise, e.hypothesis) for e in examples]


def sentence_features(encode, ids: np.ndarray, mask: np.ndarray, batch_size: int = 256) -> np.ndarray:
    """``(N, 2H)``: h[CLS] beside the mean of h over the real tokens, from a frozen encoder."""
    out = []
    with no_grad():
        for i in range(0, len(ids), batch_size):
            m = mask[i:i + batch_size].astype(np.float64)[..., None]          # (N, T, 1)
            h = np.asarray(encode(ids[i:i + batch_size], mask[i:i + batch_size]).data, dtype=np.float64)  # (N, T, H)
            out.append(np.concatenate([h[:, 0], (h * m).sum(1) / m.sum(1)], axis=1))
    return np.concatenate(out)


def probe_accuracy(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, *,
                   steps: int = PROBE_STEPS, lr: float = PROBE_LR, l2: float = PROBE_L2) -> float:
    """Test accuracy of a softmax regression fitted on standardised features.

    p(y | x) = softmax(x W + b), W and b from zero by full-batch gradient descent on the mean
    cross-entropy + l2/2·‖W‖² (convex: no initialisation to depend on). The mean and standard
    deviation of every feature come from the training rows only."""
    mu, sd = x_train.mean(0), x_train.std(0) + 1e-6
    a, b_ = (x_train - mu) / sd, (x_test - mu) / sd                           # (N, F)
    K = int(max(y_train.max(), y_test.max())) + 1
    Y = np.eye(K)[y_train]                                                    # (N, K) one-hot
    W, b = np.zeros((a.shape[1], K)), np.zeros(K)
    for _ in range(steps):
        z = a @ W + b
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g = (p - Y) / len(Y)                                                  # d(mean CE)/d(logits)
        W -= lr * (a.T @ g + l2 * W)
        b -= lr * g.sum(0)
    return float(((b_ @ W + b).argmax(1) == y_test).mean())


def entailment_probe(encode, tokenizer, seed: int, settings: dict) -> float:
    """Probe accuracy of a frozen ``encode`` on the entailment task (same pairs for every condition
    of one seed, so conditions are compared on the same data)."""
    rng = np.random.default_rng([seed, 77])
    train = entailment_pairs(tokenizer, settings["probe_train"], rng)
    test = entailment_pairs(tokenizer, settings["probe_test"], rng)
    return probe_accuracy(sentence_features(encode, *train[:2]), train[2],
                          sentence_features(encode, *test[:2]), test[2])


def bag_of_words_accuracy(seed: int, settings: dict) -> float:
    """The lexical reference: logistic regression on the premise's words and the hypothesis's words
    (kept apart with a prefix), trained and tested on the same pairs as the probe."""
    from minilm.downstream.baselines import BagOfWordsClassifier
    from minilm.data import entailment_dataset
    rng = np.random.default_rng([seed, 77])
    train = entailment_dataset(settings["probe_train"], rng=rng)
    test = entailment_dataset(settings["probe_test"], rng=rng)

    def words(e):
        return e.premise.split() + ["h:" + w for w in e.hypothesis.split()]
    bow = BagOfWordsClassifier().fit([words(e) for e in train], [e.label for e in train])
    return bow.accuracy([words(e) for e in test], [e.label for e in test])


def pretraining_metrics(metrics: dict) -> dict:
    """The held-out pre-training numbers the tables show: the replaced-token AUC over every token and
    over the masked positions only (only models with a replaced-token detector have them) and the
    generator's masked-LM accuracy."""
    out = {}
    for key in ("disc_auc", "disc_auc_masked"):
        if key in metrics and math.isfinite(metrics[key]):  # NaN: one class absent (tiny --quick runs)
            out[key] = metrics[key]
    if "mlm_accuracy" in metrics:
        out["generator_mlm"] = metrics["mlm_accuracy"]
    return out
