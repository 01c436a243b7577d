"""What the ELECTRA experiments share: pre-train one model with the ELECTRA recipe, then read the
network that would be fine-tuned two ways on the entailment task, the paper's way (fine-tuning)
and with a frozen-encoder linear probe.

The downstream protocol (the same for ``electra-ablation``, ``generator-size`` and
``electra-efficiency``):

1. **Pre-train** with ``minilm/recipes/electra.py`` (the experiment's ``recipe`` config, with the
   condition's ``objective``, ``generator_hidden_fraction`` or ``disc_weight``), ``minilm.train`` for
   ``steps`` steps, on the recipe's text plus ``task_text`` unlabelled sentences of the tasks (other
   draws than the labelled pairs, so that every word of the probe occurs in pre-training).
2. **Take** the encoder a downstream task would use (the discriminator for ELECTRA and
   ELECTRA-15%, the main network for the MLM ablations; for the BERT row the generator, which is a
   plain masked LM) and read every premise/hypothesis pair ``[CLS] premise [SEP] hypothesis [SEP]``
   of the three-class entailment task (``minilm.data.entailment_dataset``). Chance is 1/3.
3. **Fine-tune** (the paper's readout: its GLUE scores are of fine-tuned models): a copy of the model
   with a new linear layer on h[CLS], every weight trained for ``finetune_steps`` steps on
   ``probe_train`` labelled pairs, at three learning rates; the one best on 300 dev pairs is scored
   on ``probe_test`` others (:func:`finetune_entailment`). The claims are read on it.
4. **Probe**: a multinomial logistic regression on the frozen sentence vector
   ``[h_CLS ; mean_t h_t]`` (2H features, standardised on the training pairs), fitted by full-batch
   gradient descent on the same pairs (``minilm.downstream.probe``): what pre-training put into the
   features with no further training, deterministic and cheap.

Fine-tuning also teaches the untrained encoder (the "no pre-training" row shows how much), so the
two readouts can disagree: the probe asks what the features hold, fine-tuning what they are a good
start for, which is the paper's question.

Letters: N examples, T tokens, H hidden size, K classes.
"""
from __future__ import annotations

import math
import os
import re
import tempfile
from dataclasses import dataclass, replace

import numpy as np

from autograd import nn, no_grad
from autograd.errors import ConfigError
from minilm.downstream.probe import probe_accuracy
from minilm.experiments import recipe_field, run_schedule
from minilm.recipes.electra import ElectraRecipeConfig
from minilm.recipes.config import override


@dataclass(frozen=True)
class ElectraExperimentConfig:
    """The settings of the ELECTRA experiments: the recipe's config (``minilm train electra``: its
    sizes, model and schedule) with a shorter run and a generator sampled at temperature 2
    (:data:`TEMPERATURE_NOTE` says why), the probe's data and the fine-tuned readout's length.
    ``quick()``: toy sizes."""
    probe_train: int = 256                       # labelled entailment pairs the probe is fitted on
    probe_test: int = 1000                       # held-out pairs the probe is scored on
    task_text: int = 800                         # unlabelled task sentences mixed into the pre-training text
                                                 # (other draws than the probe's), so that its words occur there
    finetune_steps: int = 200                    # steps of the fine-tuned readout per learning rate (0: none)
    recipe: ElectraRecipeConfig = recipe_field(ElectraRecipeConfig(), steps=300, warmup=30,
                                               temperature=2.0)  # minilm train electra's

    @classmethod
    def quick(cls):
        return override(cls(), steps=60, warmup=6, docs=40, n_layer=1, n_head=2, n_embd=32, batch_size=8,
                        vocab_size=200, probe_train=64, probe_test=150, task_text=100, finetune_steps=20)


def pretrain(recipe_cfg: ElectraRecipeConfig, seed: int, *, steps: int | None = None, task_text: int = 0,
             **overrides):
    """Pre-train one ELECTRA-recipe model; returns ``(recipe, held-out metrics)``.

    ``recipe_cfg`` is the experiment's ``recipe`` (sizes, model, schedule); ``overrides`` are recipe
    options such as ``objective="electra15"``. ``task_text``: unlabelled sentences of the downstream
    tasks added to the recipe's text (:func:`pretraining_documents`). ``steps=0`` builds the model and
    tokenizer without training (the "no pre-training" reference); the metrics are then {}."""
    from minilm.recipes import electra
    from minilm.train import train
    cfg = override(recipe_cfg, seed=seed, **overrides)
    with tempfile.TemporaryDirectory(prefix="minilm-electra-") as out:
        if task_text:
            from minilm.data import write_corpus
            path = os.path.join(out, "corpus.txt")
            write_corpus(pretraining_documents(cfg, seed, task_text), path)
            cfg = override(cfg, corpus=path)
        recipe = electra.ElectraRecipe(cfg)
        schedule = run_schedule(cfg, seed, steps)
        if schedule.steps == 0:
            return recipe, {}
        summary = train(recipe, schedule, out, progress=False, plot=False)
    return recipe, summary["metrics"]


def pretraining_documents(cfg: ElectraRecipeConfig, seed: int, task_text: int) -> list[list[str]]:
    """The recipe's text (``--corpus``, or ``docs`` synthetic documents) and ``task_text`` unlabelled
    task sentences in documents of 8, as gpt-vs-bert and the bake-off read them."""
    from minilm.experiments.gpt_vs_bert import pretraining_documents as with_task_text
    return with_task_text({"corpus": cfg.corpus, "docs": cfg.docs, "task_text": task_text}, seed)


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


def probe_pairs(tokenizer, seed: int, settings: dict) -> tuple:
    """The probe's (train, test) :func:`entailment_pairs` of one seed: ``probe_train`` and then
    ``probe_test`` pairs, the same for every condition and readout of that seed."""
    rng = np.random.default_rng([seed, 77])
    train = entailment_pairs(tokenizer, settings["probe_train"], rng)
    return train, entailment_pairs(tokenizer, settings["probe_test"], rng)


def entailment_probe(encode, tokenizer, seed: int, settings: dict, features=None) -> float:
    """Probe accuracy of a frozen ``encode`` on the entailment task (same pairs for every condition
    of one seed, so conditions are compared on the same data). ``features(ids, mask) -> (N, F)``
    replaces :func:`sentence_features` of ``encode`` where a model is read another way."""
    features = features or (lambda ids, mask: sentence_features(encode, ids, mask))
    train, test = probe_pairs(tokenizer, seed, settings)
    return probe_accuracy(features(*train[:2]), train[2], features(*test[:2]), test[2])


class _Network(nn.Module):
    """One network of an ``Electra`` model as an encoder with ``encode(ids, mask) -> (N, T, H)``, the
    interface ``EncoderClassifier`` fine-tunes (the model is a submodule, so its weights train)."""

    def __init__(self, model, network: str):
        super().__init__()
        self.model, self.network = model, network

    def encode(self, input_ids, attention_mask=None):
        return encoder_of(self.model, self.network)[0](input_ids, attention_mask)


FINETUNE_LRS = (3e-4, 1e-3, 3e-3)   # the fine-tuned readout's learning rates; 1e-2 diverges on some seeds
# The two-rate readout of bart-noising, masking and the bake-off, which must fit a tighter CPU budget: over 17
# bart-noising runs (seeds 0-2, 200 steps, the three rates above) the rate best on the dev pairs was 1e-3 or 3e-3
# every time.
TWO_FINETUNE_LRS = FINETUNE_LRS[1:]


def finetune_entailment(model, network: str, tokenizer, seed: int, settings: dict, *, steps: int = 200,
                        lrs=FINETUNE_LRS, dev: int = 300, pool: str = "cls") -> tuple[float, float]:
    """The paper's readout for an encoder: :func:`finetune_pairs` with a new linear layer on h[CLS]
    of ``network`` (``EncoderClassifier``; ``pool="mean"``: on the mean of the real tokens' states)."""
    from minilm.downstream.finetune import EncoderClassifier
    return finetune_pairs(model, lambda copy: EncoderClassifier(_Network(copy, network), encoder_of(copy, network)[1],
                                                                3, rng=np.random.default_rng([seed, 4]), pool=pool),
                          tokenizer, seed, settings, steps=steps, lrs=lrs, dev=dev)


def finetune_pairs(model, make_classifier, tokenizer, seed: int, settings: dict, *, steps: int = 200,
                   lrs=FINETUNE_LRS, dev: int = 300) -> tuple[float, float]:
    """Fine-tuning on the entailment pairs: ``make_classifier(copy)`` wraps a copy of ``model`` (same
    weights) in a classifier with ``BertForSequenceClassification``'s call; every weight is trained
    for ``steps`` steps (batch 32) on the probe's training pairs, once per learning rate, and the rate
    with the best accuracy on ``dev`` other pairs is kept (``finetune_at_best_rate``). Returns (its
    accuracy on the probe's test pairs, that rate). ``model`` itself is left as it was."""
    from minilm.downstream.finetune import finetune_at_best_rate
    train, test = probe_pairs(tokenizer, seed, settings)
    held = entailment_pairs(tokenizer, dev, np.random.default_rng([seed, 78]))
    state = model.state_dict()

    def fresh_copy():
        copy = type(model)(model.config, rng=np.random.default_rng(0))
        copy.load_state_dict(state)
        return make_classifier(copy)
    return finetune_at_best_rate(fresh_copy, train[:3], held[:3], test[:3], lrs=lrs, steps=steps, seed=seed)


def unseen_words(documents, texts) -> tuple[list[str], int, float]:
    """The word types of ``texts`` that never occur in ``documents`` (lists of sentences), sorted; how
    many types ``texts`` have; and the share of their word tokens that are unseen. Words are runs of
    a-z and apostrophes, lower-cased; ``None`` texts are skipped."""
    def words(text):
        return re.findall(r"[a-z']+", (text or "").lower())
    seen = {w for doc in documents for line in doc for w in words(line)}
    tokens = [w for text in texts for w in words(text)]
    unseen = sorted(set(tokens) - seen)
    missing = set(unseen)
    return unseen, len(set(tokens)), sum(w in missing for w in tokens) / max(len(tokens), 1)


def unseen_probe_words(documents, settings: dict, seed: int = 0) -> tuple[list[str], int, float]:
    """:func:`unseen_words` of the entailment probe's pairs (``seed``'s training and test pairs):
    the words the encoder meets only as untrained sub-word pieces."""
    from minilm.data import entailment_dataset
    rng = np.random.default_rng([seed, 77])   # the probe's pairs (entailment_probe)
    pairs = entailment_dataset(settings["probe_train"], rng=rng) + entailment_dataset(settings["probe_test"], rng=rng)
    return unseen_words(documents, [text for e in pairs for text in (e.premise, e.hypothesis)])


def text_note(cfg: ElectraExperimentConfig) -> str:
    """The page's line on the pre-training text: which of the probe's words it lacks (seed 0)."""
    s = {"probe_train": cfg.probe_train, "probe_test": cfg.probe_test}
    unseen, types, share = unseen_probe_words(pretraining_documents(cfg.recipe, 0, cfg.task_text), s)
    text = cfg.recipe.corpus or f"{cfg.recipe.docs} synthetic documents"
    head = (f"Pre-training text: {text} and {cfg.task_text} unlabelled sentences of the tasks (other draws than the "
            "probe's)" if cfg.task_text else f"Pre-training text: {text}, with no sentences of the tasks")
    if not unseen:
        return head + f": every one of the entailment probe's {types} word types occurs in it (seed 0)."
    return (head + f": {len(unseen)} of the entailment probe's {types} word types ({share:.0%} of its word tokens; "
            f"e.g. {', '.join(unseen[:4])}) never occur in it (seed 0), and reach every encoder as sub-word pieces "
            "it never trained on.")


def readouts(model, network: str, tokenizer, seed: int, settings: dict) -> dict:
    """The downstream scores of one network of a pre-trained model: ``probe`` (a linear probe on the
    frozen encoder, :func:`entailment_probe`) and, unless ``finetune_steps`` is 0, ``finetuned`` (the
    paper's readout, :func:`finetune_entailment` for that many steps per learning rate)."""
    out = {"probe": entailment_probe(encoder_of(model, network)[0], tokenizer, seed, settings)}
    if settings["finetune_steps"]:
        out["finetuned"] = finetune_entailment(model, network, tokenizer, seed, settings,
                                               steps=settings["finetune_steps"])[0]
    return out


def untrained_readouts(recipe_cfg: ElectraRecipeConfig, seed: int, settings: dict) -> dict:
    """:func:`readouts` of the discriminator before any pre-training (the "no pre-training" rows): what
    fine-tuning and the probe make of the initialisation alone."""
    recipe, _ = pretrain(recipe_cfg, seed, steps=0, task_text=settings["task_text"])
    return readouts(recipe.model, "discriminator", recipe.tokenizer, seed, settings)


# Measured with `python tools/electra_discriminator.py` (seeds 0-2, electra-ablation's ELECTRA row; its --temperature,
# --task-text, --steps, --lr and --finetune for the rows named), and `minilm experiment electra-efficiency
# --temperature 1 --task-text 800 --steps 1800` (14.1 CPU-min).
DISCRIMINATOR_CAVEAT = (
    "Caveat, measured: at the paper's temperature 1 and this scale the discriminator does not learn to detect the "
    "generator's samples, so the ELECTRA rows do not show the paper's mechanism. Its held-out replaced-token loss "
    "stays at the base rate's entropy (with no task text: 0.375-0.380 nats against 0.385-0.387 for always answering "
    "the replaced share, about 13%; with 800 task sentences, 0.345 against 0.351 after 1,200 steps, and no better "
    "with lr 5e-4), and its AUC at 0.55-0.57; fed uniformly random replacements instead (temperature 100) the same "
    "code reaches AUC 0.885 in 300 steps. Without task text, ELECTRA's probe lead comes from the probe's words that "
    "the pre-training text lacks (a probe on the replaced-token logits alone scores 38-43%); with 800 task "
    "sentences, ELECTRA's encoder probes 48.7 ± 7.2 against BERT (MLM)'s 59.8 ± 4.9 and the untrained 51.5 ± 3.6, "
    "and along 1,800 steps it stays at 52-58% while BERT climbs to 68.1 ± 0.8. Fine-tuned (the best of three "
    "learning rates on 300 dev pairs), BERT (MLM) reaches 87.2 ± 4.6% and ELECTRA 66.5 ± 7.4% with the task text.")

TEMPERATURE_NOTE = (
    "The generator's samples are drawn at temperature {temperature:g}; the paper's are drawn at 1. A miniature's "
    "choice, measured: at temperature 1 a 2-layer, 64-wide discriminator never learns to tell the generator's "
    "plausible samples from the originals (held-out loss at the base rate's entropy, AUC 0.55-0.57, at 300 and at "
    "1,200 steps, with or without task text), so its rows would show no replaced-token detection at all. At 2 "
    "the samples are less often plausible and the detector learns (AUC 0.74-0.80 at 300-1,200 steps, seeds 0-2). "
    "That is the paper's own argument for a small generator (Figure 3: too strong a generator makes the task too "
    "hard for the discriminator), applied to a discriminator a quarter as wide as ELECTRA-Small's (64 against "
    "256) with 2 layers of its 12.")


def readout_note(settings: dict) -> str:
    """The page's line on how the entailment task reads the encoders."""
    head = (f"Entailment: 3 classes (chance 33.3%), {settings['probe_train']} labelled training pairs and "
            f"{settings['probe_test']} test pairs, read ")
    probe = "a linear probe on the frozen encoder's [h_CLS ; mean h]"
    if not settings["finetune_steps"]:
        return head + f"by {probe} (no fine-tuning in this run: the claims are read on the probe)."
    rates = ", ".join(f"{lr:g}" for lr in FINETUNE_LRS)
    return head + (f"two ways: fine-tuned (every weight, {settings['finetune_steps']} steps of batch 32 at each "
                   f"learning rate of {rates}, the one best on 300 dev pairs kept: the paper's readout, and the "
                   f"claims are read on it) and {probe}.")


def claims_on_readout(claims: list, settings: dict) -> list:
    """The claims, read on the fine-tuned accuracy (the paper's readout), or on the probe when the run
    has no fine-tuning (``finetune_steps`` 0)."""
    return claims if settings["finetune_steps"] else [replace(c, metric="probe") for c in claims]


def caveats(settings: dict) -> list[str]:
    """The page's notes on the generator's temperature: why it is not the paper's 1, or (at 1) what
    that does to the discriminator."""
    if settings["temperature"] == 1:
        return [DISCRIMINATOR_CAVEAT]
    return [TEMPERATURE_NOTE.format(temperature=settings["temperature"])]


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
