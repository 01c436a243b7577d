"""RoBERTa's input formats: does next-sentence prediction help, and should a block stay inside one
document? (Liu et al. 2019, "RoBERTa", §4.2 and Table 2.)

The paper pre-trains BERT-base-sized models on BOOKCORPUS + WIKIPEDIA with four input formats
(inputs of at most 512 tokens) and fine-tunes them. Table 2 (development sets, as every table of
the paper's §4: SQuAD 1.1 / 2.0 as F1, MNLI-m, SST-2, RACE as accuracy):

    SEGMENT-PAIR + NSP    90.4 / 78.7   84.0   92.9   64.2   BERT's inputs: two segments of sentences
    SENTENCE-PAIR + NSP   88.7 / 76.2   82.9   92.1   63.0   one sentence per segment
    FULL-SENTENCES        90.4 / 79.1   84.7   92.5   64.8   no NSP, blocks may cross documents
    DOC-SENTENCES         90.6 / 79.7   84.7   92.7   65.6   no NSP, a block stays in one document
    (BERT-base, as released: 88.5 / 76.3, 84.3, 92.8, 64.3)

Single sentences hurt (the model "is unable to learn long-range dependencies"); dropping NSP matches
or slightly improves the downstream scores; DOC-SENTENCES is slightly best, but its batch size has
to vary, so the rest of the paper uses FULL-SENTENCES "for easier comparison with related work".
For the two formats with short inputs the paper raises the batch size to keep the tokens per batch
about those of the others (SENTENCE-PAIR: a bigger fixed batch; DOC-SENTENCES: "we dynamically
increase the batch size" near document ends) — this miniature fills every step that way.

The miniature (minilm/recipes/roberta.py, ``--packing``): the same synthetic corpus (400 documents,
10% held out, about 5.5 sentences and 65 tokens a document) plus ``task_text`` unlabelled sentences of
the two probe tasks in documents of 8 (other draws than the probes': without them 24% of the entailment
probe's tokens, "not" and every hypernym among them, never occur in pre-training), byte-level BPE of 600 entries, inputs of
at most 64 tokens, RoBERTa's dynamic 80/10/10 masking of 15% of the tokens, 2 layers of width 64:

* ``SEGMENT-PAIR+NSP``: ``<s> A </s> B </s>``, A and B runs of whole sentences filling 64 tokens
  (BERT's ``create_nsp_instances``), B the true continuation or, half of the time, from another
  document (65% of the pairs on this corpus: a short document often has no second segment to
  offer, and BERT's rule then takes B from elsewhere); L = L_MLM + L_NSP.
* ``SENTENCE-PAIR+NSP``: the same with one sentence in A and one in B (about 27 tokens a pair).
* ``FULL-SENTENCES``: blocks of whole sentences up to 64 tokens, across documents (``</s>`` between
  two documents); MLM only.
* ``DOC-SENTENCES``: the same, but every document starts a new block; MLM only.
* ``no pre-training``: the reference row — the same encoder at its random initialisation.

RoBERTa's model has no pooler and no NSP head, so the two +NSP formats train the library's BERT
(``BertForPreTraining``: a second segment embedding, the pooler and a 2-way NSP head on top of the
same encoder) with RoBERTa's tokenizer, masking and schedule; the encoder probed is the same shape.

What is held equal: optimizer steps, and tokens per step — every format fills each step with its
inputs until the next would pass ``tokens_per_batch`` (2,048 = 32 full blocks of 64), so a step
holds about 77 sentence pairs, 41 segment pairs, 35 FULL-SENTENCES blocks or 47 DOC-SENTENCES
blocks (40 to 53: the shorter blocks at document ends make bigger batches) — about 2,020 tokens
each time (``--tokens-per-batch`` of the recipe). Every run counts the tokens it trained on (the table's "tokens seen" column) and fails if
they fall short of steps × tokens_per_batch by more than ``token_tolerance`` (5%). Padding is not
counted (the pair formats are padded to the longest pair of their step, so they cost a little more).

Metrics:
  entailment probe   a linear probe (minilm/downstream/probe.py) on the frozen encoder's
                     [h_<s> ; mean h] of ``<s> premise </s> hypothesis </s>``, read the same way by
                     every format: the ``</s>`` marks the hypothesis and no model gets segment ids
                     (the formats without NSP have no segment embedding; giving the +NSP models
                     theirs would hand them a trained marker of the hypothesis the others lack), the
                     three-class entailment task of minilm/data/downstream.py; chance 1/3;
  sentiment probe    the same on ``<s> sentence </s>`` of the sentiment task with negation; chance 1/2;
  entailment, fine-tuned  (``--ft-steps N``, default 150; 0 skips it) the paper's readout, which the
                     findings are read on (on the probe when it is skipped): a copy of the encoder
                     and a new layer on h_<s>, every weight trained N steps on three quarters of the
                     probe's training pairs at each learning rate of ``--ft-lrs``; the rate best on
                     the last quarter (dev) is scored on the test pairs (:func:`finetuned_accuracy`);
  MLM accuracy       held-out masked-LM accuracy on the SAME held-out blocks for every format
                     (FULL-SENTENCES blocks of the held-out documents, one fixed mask each) — long
                     inputs, which the sentence-pair model never saw during pre-training;
  tokens seen        real (non-padding) tokens in all training steps, in thousands.

Why NSP might or might not hurt here: each synthetic document keeps to one topic (its first sentence
names it and its nouns come from it), so a NotNext segment from another document nearly always
changes topic, and NSP could be solved by topic words alone (the weakness Lan et al. 2019, ALBERT
§4.2, point out in the real NSP): an easy loss that adds little signal and costs little. At these
sizes the model does not even learn that: after 300 steps (seed 0) held-out NSP accuracy is 66.7%
for segment pairs, below the 69.8% of always answering NotNext, and 53.1% for sentence pairs, the
majority share exactly. So whatever sets the pair formats apart comes from their inputs — shorter
contexts (sentence pairs), documents cut into two segments, two-segment inputs laid out like the
entailment probe's — rather than from a learned NSP. Neither downstream task needs
discourse or topic, and the documents are short (one or two blocks), so DOC-SENTENCES and
FULL-SENTENCES differ only in whether a block mixes the end of one document with the start of the
next; the paper's long-range effects (RACE, SQuAD) have no counterpart on a corpus of short, simple
sentences.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import numpy as np

from autograd import nn
from autograd.errors import ConfigError
from minilm.experiments import Metric, Plan, config_of, positive_numbers, recipe_field, run_schedule, settings_of
from minilm.experiments.claims import Beats
from minilm.recipes.config import override
from minilm.recipes.roberta import RobertaRecipeConfig

NAME = "roberta-inputs"
HELP = "RoBERTa's input formats (SEGMENT-PAIR+NSP, SENTENCE-PAIR+NSP, FULL-SENTENCES, DOC-SENTENCES)"

FORMATS = {                               # condition -> the RoBERTa recipe's --packing
    "SEGMENT-PAIR+NSP": "segment-pair",
    "SENTENCE-PAIR+NSP": "sentence-pair",
    "FULL-SENTENCES": "full",
    "DOC-SENTENCES": "doc",
}
REFERENCE = "no pre-training"
CONDITIONS = [*FORMATS, REFERENCE]
# The reason read on the frozen probe (--ft-steps 0). Measured on this machine with this file's defaults, with
# task_text=0 (the record before task text was mixed in), with the paper's readout (`minilm experiment
# roberta-inputs --ft-steps 150`, seeds 0-2) and at 4x the steps (`minilm experiment roberta-inputs --steps 1200
# --ft-steps 150`, seeds 0-2, 21 CPU-min).
PROBE_WHY_NOT = (
    "measured: at 300 steps this probe does not read the pre-training, and with more steps it reads the "
    "sentence-pair format best, whose inputs are shaped like its own. At 300 steps no encoder probes better "
    "than the untrained one by more than the seeds' spread (untrained 55.6; the formats 51.2-57.2), with the "
    "probes' words in the pre-training text (task_text) or without them (FULL-SENTENCES 51.5 against 51.6 "
    "untrained). The paper's readout, fine-tuning (--ft-steps 150: every weight, the better of two learning "
    "rates on 256 dev pairs), reads it (the untrained encoder 74.0 ± 1.4, every format 7-18 points above) but "
    "varies more than the formats differ: FULL-SENTENCES 92.2 ± 3.7, SENTENCE-PAIR+NSP 88.7 ± 4.2, "
    "DOC-SENTENCES 82.6 ± 2.7, SEGMENT-PAIR+NSP 81.2 ± 1.0. At 4x the steps (--steps 1200) every format "
    "probes above the untrained encoder (61.1-75.6) and the second and third findings hold in direction, but "
    "SENTENCE-PAIR+NSP leads the probe (75.6 ± 9.2; DOC-SENTENCES 68.4, FULL-SENTENCES 65.9, SEGMENT-PAIR+NSP "
    "61.1): it was pre-trained on one sentence against another, the layout of the probe's premise and "
    "hypothesis, while on long held-out blocks its masked LM is by far the worst (MLM accuracy 12.4 against "
    "30.0-49.8; at 300 steps 8.4 against 15.5-18.1, the paper's order). Fine-tuned at 1,200 steps it is third "
    "of four (94.8 ± 4.5; DOC-SENTENCES 98.2, SEGMENT-PAIR+NSP 97.0, FULL-SENTENCES 89.8). The paper's largest "
    "gaps are on long inputs (SQuAD 2.0 76.2 against 78.7-79.7, RACE 63.0 against 64.2-65.6), which this "
    "miniature's two-sentence tasks do not have")
# Measured on this machine: the recorded runs (seeds 0-2), `minilm experiment roberta-inputs --steps 600` (seeds 0-2,
# 10.7 CPU-min) and `--steps 1200` (seeds 0-2, 17.5 CPU-min); and each row's run_one with probe_train=4096 (seeds 0-2).
FINETUNED_WHY_NOT = (
    "measured: fine-tuned, the formats differ by about their seeds' spread on this two-sentence task, and "
    "their order changes with compute. The fine-tune reads the pre-training (the untrained encoder 74.0 ± 1.4, "
    "every format 7-18 points above it; the frozen probe does not at 300 steps: untrained 55.6, the formats "
    "51.2-57.2), but at 300 steps SENTENCE-PAIR+NSP (88.7 ± 4.2) is behind FULL-SENTENCES (92.2 ± 3.7) and "
    "ahead of DOC-SENTENCES (82.7 ± 2.7) and SEGMENT-PAIR+NSP (81.2 ± 1.0); at 2x the steps (--steps 600) it "
    "is second of four again (92.0 ± 2.6; DOC-SENTENCES 95.2 ± 7.9, SEGMENT-PAIR+NSP 90.4 ± 7.6, FULL-SENTENCES "
    "86.6 ± 5.0), and at 4x (--steps 1200) third of four (94.8 ± 4.5; DOC-SENTENCES 98.2 ± 2.1, "
    "SEGMENT-PAIR+NSP 97.0 ± 2.7, FULL-SENTENCES 89.8 ± 5.5). Four times the labelled pairs at 300 steps "
    "(probe_train 4096: 3,072 to fine-tune on) do not turn it either: SENTENCE-PAIR+NSP is then level with the "
    "no-NSP formats (95.6 ± 3.6; FULL-SENTENCES 95.9 ± 3.5, DOC-SENTENCES 95.8 ± 1.2) and SEGMENT-PAIR+NSP at "
    "the untrained encoder's level (86.2 ± 0.3 against 86.5 ± 2.9). DOC-SENTENCES passes FULL-SENTENCES from 600 "
    "steps on, and the long-input format furthest behind SENTENCE-PAIR+NSP trails it by 7.5 points at 300 "
    "steps, 5.4 at 600 and 5.0 at 1,200. The masked LM shows the paper's order at every budget: on long "
    "held-out blocks SENTENCE-PAIR+NSP is by far the worst (MLM accuracy 8.4 against 15.5-18.1 at 300 steps, "
    "11.5 against 18.6-23.9 at 600, 12.4 against 30.0-49.8 at 1,200). The paper's MNLI gaps (0.9-1.8 points) are "
    "smaller than three seeds resolve here, and its largest gaps are on long inputs (SQuAD 2.0 76.2 against "
    "78.7-79.7, RACE 63.0 against 64.2-65.6), which this miniature's two-sentence tasks do not have")
FINETUNED = ("read here, as the paper reads it, on the fine-tuned entailment score", "entailment_finetuned")
PROBE = ("read here on the frozen encoder's entailment probe", "entailment_probe")
FINDINGS = [   # (finding, above, below)
    ("Single sentences hurt: SENTENCE-PAIR+NSP is below the formats with long inputs (Liu et al. 2019, Table 2, "
     "MNLI-m: 82.9 against 84.0-84.7)", ("SEGMENT-PAIR+NSP", "FULL-SENTENCES", "DOC-SENTENCES"),
     ("SENTENCE-PAIR+NSP",)),
    ("Without NSP, blocks of whole sentences match or beat BERT's segment pairs with NSP (MNLI-m 84.7 vs 84.0)",
     ("FULL-SENTENCES", "DOC-SENTENCES"), ("SEGMENT-PAIR+NSP",)),
    ("A block that stays inside one document is slightly better than one that crosses documents (SQuAD 2.0 79.7 "
     "vs 79.1, RACE 65.6 vs 64.8)", ("DOC-SENTENCES",), ("FULL-SENTENCES",)),
]


def claims_for(settings: dict) -> list:
    """The findings, read on the fine-tuned score (the paper's readout) when ``ft_steps`` > 0, else on
    the frozen probe; each with the reason measured for that readout."""
    (readout, metric), why = (FINETUNED, FINETUNED_WHY_NOT) if settings["ft_steps"] > 0 else (PROBE, PROBE_WHY_NOT)
    return [Beats(f"{finding}; {readout}.", metric, above=above, below=below, why_not=why)
            for finding, above, below in FINDINGS]


@dataclass(frozen=True)
class RobertaInputsConfig:
    """``minilm experiment roberta-inputs``: the RoBERTa recipe's config (the corpus, the model and the
    compute every format shares), each row its ``packing``. ``quick()``: toy sizes."""
    probe_train: int = 1024         # labelled examples each probe is fitted on (per task): the seed spread of a
                                    # 256-example probe (2-14 points) was larger than the formats' differences
    probe_test: int = 1000          # held-out examples each probe is scored on
    token_tolerance: float = 0.05   # a run may train on at most this share fewer tokens than steps × tokens_per_batch
    task_text: int = 800            # unlabelled sentiment and entailment sentences (other draws than the probes')
                                    # added to the pre-training documents, so that the probes' words occur in them
    ft_steps: int = 150             # fine-tune each encoder on the entailment pairs (every weight and a new layer
                                    # on h_<s>) for this many steps, the paper's readout, which the claims are read
                                    # on (0: none, the claims read on the probe); it costs 0.6 of the run's 5.6 CPU-min
    ft_lrs: str = "1e-3,3e-3"       # fine-tuning peak learning rates tried; the best on the dev pairs is reported
    recipe: RobertaRecipeConfig = recipe_field(RobertaRecipeConfig(), set_by_rows=("packing",), steps=300,
                                               warmup=30, tokens_per_batch=2048)  # minilm train roberta's

    @classmethod
    def quick(cls):
        return override(cls(), docs=60, steps=40, tokens_per_batch=1024, warmup=5, n_layer=1, n_head=2, n_embd=32,
                        vocab_size=400, probe_train=64, probe_test=200, task_text=200, ft_steps=20)


CONFIG = RobertaInputsConfig
CLAIMS = claims_for({"ft_steps": CONFIG.ft_steps})     # the default run's
OPTIONS = ("corpus", "docs", "task_text", "steps", "tokens_per_batch", "ft_steps", "ft_lrs")


def plan(cfg: RobertaInputsConfig) -> Plan:
    settings = settings_of(cfg)
    return Plan(
        title="RoBERTa's input formats at equal steps and tokens: fine-tuning, frozen-feature probes and held-out MLM",
        conditions=list(CONDITIONS),
        metrics=[*([Metric("entailment_finetuned", "entailment, fine-tuned")] if settings["ft_steps"] > 0 else []),
                 Metric("entailment_probe", "entailment probe"),        # the claims' readout first: plotted
                 Metric("sentiment_probe", "sentiment probe"),
                 Metric("mlm_accuracy", "MLM accuracy (shared held-out blocks)"),
                 Metric("tokens_seen_k", "tokens seen (k)", percent=False)],
        settings=settings,
        notes=["Liu et al. 2019, Table 2 (SQuAD 1.1/2.0 F1, MNLI-m, SST-2, RACE; dev sets): SEGMENT-PAIR+NSP "
               "90.4/78.7, 84.0, 92.9, 64.2; SENTENCE-PAIR+NSP 88.7/76.2, 82.9, 92.1, 63.0; FULL-SENTENCES 90.4/79.1, 84.7, 92.5, "
               "64.8; DOC-SENTENCES 90.6/79.7, 84.7, 92.7, 65.6.",
               f"Held equal: {settings['steps']} optimizer steps of at most {settings['tokens_per_batch']:,} tokens "
               f"each (inputs are added to a step while they fit; checked: every run's tokens seen is within "
               f"{settings['token_tolerance']:.0%} of steps × tokens per step); same corpus, tokenizer, masking, "
               "encoder size and probe data within a seed.",
               f"Pre-training text: the corpus plus {settings['task_text']} unlabelled sentences of the two probe "
               "tasks (other draws than the probes'), so that the probes' words occur in it.",
               *([f"Fine-tuned: a copy of the encoder and a new layer on h_<s>, every weight trained "
                  f"{settings['ft_steps']} steps of 32 pairs on {settings['probe_train'] - dev_size(settings)} of the "
                  f"probe's training pairs at each learning rate of {settings['ft_lrs']}; the rate best on the other "
                  f"{dev_size(settings)} (dev) is scored on the test pairs."] if settings["ft_steps"] > 0 else []),
               "The +NSP rows train BertForPreTraining (RoBERTa's model has no NSP head): the same encoder plus a "
               "second segment embedding, a pooler and the NSP head; no pre-training: the encoder at initialisation."],
        claims=claims_for(settings))


def check_tokens(tokens_seen: int, settings: dict, condition: str = "") -> None:
    """Equal compute: raise unless ``tokens_seen`` is within ``token_tolerance`` below the budget
    ``steps × tokens_per_batch`` (a step never takes more than its budget)."""
    budget = settings["steps"] * settings["tokens_per_batch"]
    share = tokens_seen / budget
    if not (1 - settings["token_tolerance"] <= share <= 1):
        raise ConfigError(f"{NAME}: {condition or 'a run'} trained on {tokens_seen:,} tokens, {share:.1%} of "
                          f"steps × tokens_per_batch = {budget:,}: expected between "
                          f"{1 - settings['token_tolerance']:.0%} and 100% (equal tokens per step for every format)")


def recipe_config(condition: str, seed: int, settings: dict):
    """The experiment's RoBERTa recipe config with this seed and the row's format."""
    if condition not in CONDITIONS:
        raise ConfigError(f"{NAME}: unknown condition {condition!r}; expected one of {CONDITIONS}")
    return override(config_of(CONFIG, settings).recipe, seed=seed, packing=FORMATS.get(condition, "full"))


def tokens_seen(recipe, steps: int) -> int:
    """Real tokens in the ``steps`` training batches of ``recipe`` (its schedule, without masking)."""
    return sum(len(recipe.train_blocks[i]) for s in range(steps) for _, i in recipe.epoch_schedule(s))


def encoder(recipe):
    """``encode(ids, mask) -> (N, T, H)``: the frozen encoder of the recipe's model, every format
    reading a pair the same way (no segment ids: see the module docstring)."""
    model = recipe.model
    if recipe.pairs:
        return lambda ids, mask: model.bert(ids, None, mask)["last_hidden_state"]
    return model.encode


def probe_data(tokenizer, seed: int, settings: dict) -> dict:
    """``task -> (train (ids, mask, labels), test (...))``: entailment as ``<s> premise </s> hypothesis
    </s>``, sentiment as ``<s> sentence </s>``, cut to ``tokens_per_sample`` (the positions the models
    have); the same examples for every format of a seed."""
    from minilm.data import entailment_dataset, pad_batch, sentiment_dataset
    bos, eos, pad = tokenizer.bos_id, tokenizer.eos_id, tokenizer.pad_id

    def arrays(rows, labels):
        ids, mask = pad_batch([row[:settings["tokens_per_sample"]] for row in rows], pad)
        return ids, mask, np.asarray(labels)

    out = {}
    rng = np.random.default_rng([seed, 77])
    n = (settings["probe_train"], settings["probe_test"])
    ent = [entailment_dataset(k, rng=rng) for k in n]
    out["entailment"] = [arrays([[bos, *tokenizer.encode(e.premise), eos, *tokenizer.encode(e.hypothesis), eos]
                                 for e in part], [e.label for e in part]) for part in ent]
    rng = np.random.default_rng([seed, 78])
    sent = [sentiment_dataset(k, rng=rng) for k in n]
    out["sentiment"] = [arrays([[bos, *tokenizer.encode(e.text), eos] for e in part], [e.label for e in part])
                        for part in sent]
    return out


def dev_size(settings: dict) -> int:
    """Labelled pairs held out of fine-tuning to choose its learning rate: a quarter of ``probe_train``."""
    return settings["probe_train"] // 4


def ft_lrs(settings: dict) -> list[float]:
    """The learning rates of ``--ft-lrs``: each encoder is fine-tuned once per rate."""
    return positive_numbers(settings["ft_lrs"], NAME, "--ft-lrs", "1e-3,3e-3")


class _Encoder(nn.Module):
    """The recipe's encoder as a module with ``encode(ids, mask)`` (what ``EncoderClassifier`` wraps),
    read as the probes read it (:func:`encoder`: no segment ids)."""

    def __init__(self, recipe):
        super().__init__()
        self.model = recipe.model
        self._encode = encoder(recipe)

    def encode(self, ids, mask):
        return self._encode(ids, mask)                                                       # (B, T, C)


def finetuned_accuracy(recipe, data, seed: int, settings: dict) -> float:
    """The paper's readout: fine-tune every weight of the encoder and a new layer on h_<s> on the
    entailment pairs, once per learning rate of ``ft_lrs`` from the same pre-trained weights; the
    rate with the best accuracy on the ``dev_size`` pairs held out of training is scored on the test
    pairs (test accuracy). ``recipe.model`` is left as pre-trained."""
    from minilm.downstream.finetune import EncoderClassifier, finetune_at_best_rate
    (ids, mask, y), test = data
    d = dev_size(settings)
    pretrained = recipe.model.state_dict()

    def from_pretrained():                         # the same encoder, its pre-trained weights reloaded
        recipe.model.load_state_dict(pretrained)
        return EncoderClassifier(_Encoder(recipe), recipe.model.config.n_embd, 3, rng=np.random.default_rng([seed, 4]))
    try:
        return finetune_at_best_rate(from_pretrained, (ids[d:], mask[d:], y[d:]), (ids[:d], mask[:d], y[:d]), test,
                                     lrs=ft_lrs(settings), steps=settings["ft_steps"], seed=seed)[0]
    finally:
        recipe.model.load_state_dict(pretrained)
        recipe.model.eval()


def probes(recipe, seed: int, settings: dict) -> dict:
    from minilm.downstream.probe import probe_accuracy
    from minilm.experiments.electra_common import sentence_features
    encode = encoder(recipe)
    out = {}
    data = probe_data(recipe.tokenizer, seed, settings)
    for task, (train, test) in data.items():
        out[f"{task}_probe"] = probe_accuracy(sentence_features(encode, *train[:2]), train[2],
                                              sentence_features(encode, *test[:2]), test[2])
    if settings.get("ft_steps", 0) > 0:
        out["entailment_finetuned"] = finetuned_accuracy(recipe, data["entailment"], seed, settings)
    return out


def shared_mlm_accuracy(recipe, cfg) -> float:
    """Masked-LM accuracy on the FULL-SENTENCES blocks of the held-out documents (the first 128,
    block i masked with ``default_rng([seed, 99, i])``: the FULL-SENTENCES recipe's own held-out set),
    whatever the recipe's format, so that every format is scored on the same masked tokens."""
    from autograd import no_grad
    from minilm.corruption import targets_to_labels
    from minilm.data import encode_documents, pad_batch, roberta_blocks
    from minilm.recipes.common import load_documents
    tok = recipe.tokenizer
    _, val_docs = load_documents(cfg)
    blocks = roberta_blocks(encode_documents(val_docs, tok.encode), cfg.tokens_per_sample, bos_id=tok.bos_id,
                            sep_id=tok.eos_id, mode="full")[:128]
    pairs = [recipe.masker(np.asarray(b, dtype=np.int64), rng=np.random.default_rng([cfg.seed, 99, i]))
             for i, b in enumerate(blocks)]
    correct = n = 0
    recipe.model.eval()
    with no_grad():
        for i in range(0, len(pairs), 64):
            inputs, mask = pad_batch([p[0] for p in pairs[i:i + 64]], tok.pad_id)                  # (B, T)
            labels = targets_to_labels(pad_batch([p[1] for p in pairs[i:i + 64]], tok.pad_id)[0], pad_id=tok.pad_id)
            logits = recipe.mlm_logits(recipe.model, inputs, mask)                                   # (B, T, V)
            m = labels != -100
            correct += int((logits.data.argmax(-1)[m] == labels[m]).sum())
            n += int(m.sum())
    return correct / max(n, 1)


def run_one(condition: str, seed: int, settings: dict) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="minilm-roberta-inputs-text-") as tmp:
        return _run_one(condition, seed, settings, tmp)


def with_task_text(cfg, settings: dict, seed: int, tmp: str):
    """``cfg`` reading the corpus (``--corpus`` or its synthetic documents) plus ``task_text`` unlabelled
    task sentences (gpt-vs-bert's ``pretraining_documents``), written to a file in ``tmp``; ``cfg`` as it
    is when ``task_text`` is 0."""
    if settings["task_text"] <= 0:
        return cfg
    from minilm.data import write_corpus
    from minilm.experiments.gpt_vs_bert import pretraining_documents
    path = os.path.join(tmp, "corpus.txt")
    write_corpus(pretraining_documents({**settings, "docs": cfg.docs}, seed), path)
    return override(cfg, corpus=path)


def _run_one(condition: str, seed: int, settings: dict, tmp: str) -> dict[str, float]:
    from minilm.recipes import roberta
    from minilm.train import train
    cfg = with_task_text(recipe_config(condition, seed, settings), settings, seed, tmp)
    recipe = roberta.RobertaRecipe(cfg)
    seen = 0
    if condition != REFERENCE:
        steps = settings["steps"]
        seen = tokens_seen(recipe, steps)
        check_tokens(seen, settings, condition)
        with tempfile.TemporaryDirectory(prefix="minilm-roberta-inputs-") as out:
            train(recipe, run_schedule(cfg, seed), out, progress=False, plot=False)
    recipe.model.eval()
    return {**probes(recipe, seed, settings), "mlm_accuracy": shared_mlm_accuracy(recipe, cfg),
            "tokens_seen_k": seen / 1000}
