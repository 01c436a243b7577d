"""Labelled downstream tasks for fine-tuning and the ablation tables (seeded, any size).

**Sentiment with negation** (binary; 1 = positive). A sentence carries one polar word, and half of
the sentences negate it::

    the movie was good .            -> 1        the movie was not good .      -> 0
    the food was bad .              -> 0        the food was not bad .        -> 1
    i loved the concert .           -> 1        i did not love the concert .  -> 0

The label is ``polarity(word) XOR negated``, an XOR: no linear model on unigram counts (a bag
of words) can get both "good"/"not good" and "bad"/"not bad" right, since "not" would need a
negative weight next to "good" and a positive one next to "bad". A model has to read "not"
together with the word it scopes over. ``SentimentExample.negated`` marks the negated items so a
test can report their accuracy.

**Entailment** (three classes, MNLI's order: 0 entailment, 1 neutral, 2 contradiction), built from
the synthetic corpus's subjects, verbs and hypernyms (``lexicon.HYPERNYMS``)::

    the dog runs near the river .   the dog runs .                 -> entailment (drops a detail)
    the dog runs .                  the dog runs near the river .  -> neutral (adds a detail)
    the dog runs .                  an animal runs .               -> entailment (hypernym)
    an animal runs .                the dog runs .                 -> neutral (hyponym)
    the dog runs .                  the cat runs .                 -> neutral (another subject)
    the dog runs .                  the dog does not run .         -> contradiction (negation)

Half of the entailment and neutral pairs negate both sentences, so "not" alone does not give away
the class. Negation keeps the subject rule ("the dog does not run ." entails "an animal does not
run .") but reverses the detail rule: "the dog does not run ." entails "the dog does not run near
the river .", not the other way round.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from autograd.errors import MiniLMError

from .lexicon import HYPERNYMS, PREPOSITIONS, TOPICS, article

__all__ = ["SentimentExample", "EntailmentExample", "ENTAILMENT_LABELS", "sentiment_dataset",
           "entailment_dataset", "POSITIVE_WORDS", "NEGATIVE_WORDS"]

ENTAILMENT_LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")

POSITIVE_WORDS = ("good", "great", "fun", "nice", "excellent", "wonderful")
NEGATIVE_WORDS = ("bad", "boring", "awful", "terrible", "poor", "dull")
_THINGS = ("movie", "food", "game", "song", "concert", "hotel", "book", "service", "show", "trip")
_INTENSIFIERS = ("really", "very")
# (past tense, base form after "did not", polarity)
_OPINION_VERBS = (("loved", "love", 1), ("liked", "like", 1), ("enjoyed", "enjoy", 1),
                  ("hated", "hate", 0), ("disliked", "dislike", 0))


class SentimentExample(NamedTuple):
    text: str
    label: int      # 1 positive, 0 negative
    negated: bool   # the polar word is under "not"


class EntailmentExample(NamedTuple):
    premise: str
    hypothesis: str
    label: int      # index into ENTAILMENT_LABELS


def _pick(seq, rng):
    return seq[int(rng.integers(len(seq)))]


def _check_n(name: str, n: int) -> None:
    if int(n) != n or n < 0:
        raise MiniLMError(f"{name}: n={n!r}: expected a whole number >= 0")


def sentiment_dataset(n: int, *, rng: np.random.Generator, negation_prob: float = 0.5
                      ) -> list[SentimentExample]:
    """``n`` sentiment examples ``(text, label, negated)``; ``negation_prob`` of them negated."""
    _check_n("sentiment_dataset", n)
    out = []
    for _ in range(n):
        negated = bool(rng.random() < negation_prob)
        if rng.random() < 0.7:  # "the THING was [not] [very] ADJ ."
            polarity = int(rng.integers(2))
            word = _pick(POSITIVE_WORDS if polarity else NEGATIVE_WORDS, rng)
            words = ["the", _pick(_THINGS, rng), "was"]
            if negated:
                words.append("not")
            if rng.random() < 0.3:
                words.append(_pick(_INTENSIFIERS, rng))
            words += [word, "."]
        else:  # "i [did not] VERB the THING ."
            past, base, polarity = _pick(_OPINION_VERBS, rng)
            verb = ["did", "not", base] if negated else [past]
            words = ["i", *verb, "the", _pick(_THINGS, rng), "."]
        out.append(SentimentExample(" ".join(words), int(polarity != negated), negated))
    return out


def _clause(subject: str, verb: tuple[str, str], negated: bool, pp: str = "") -> str:
    """``SUBJECT VERB [PP] .`` in the singular, or ``SUBJECT does not VERB [PP] .``."""
    words = [subject, *(["does", "not", verb[1]] if negated else [verb[0]])]
    if pp:
        words.append(pp)
    return " ".join(words) + " ."


def entailment_dataset(n: int, *, rng: np.random.Generator) -> list[EntailmentExample]:
    """``n`` balanced entailment examples ``(premise, hypothesis, label)`` (labels drawn uniformly)."""
    _check_n("entailment_dataset", n)
    topics = list(TOPICS.values())
    out = []
    for _ in range(n):
        label = int(rng.integers(3))
        t = _pick(topics, rng)
        (noun, _), verb = _pick(t.subjects, rng), _pick(t.intransitive, rng)
        place = _pick(t.places, rng)[0]
        pp = f"{_pick(PREPOSITIONS, rng)} the {place}"
        neg = bool(rng.random() < 0.5)
        specific, general = f"the {noun}", f"{article(HYPERNYMS[noun])} {HYPERNYMS[noun]}"
        specific_clause, general_clause = _clause(specific, verb, neg), _clause(general, verb, neg)
        # with a detail, "the dog runs near the river ." says more; under negation it says less
        detailed = _clause(specific, verb, neg, pp)
        stronger, weaker = (specific_clause, detailed) if neg else (detailed, specific_clause)
        other = _pick([s for s, _ in t.subjects if s != noun], rng)
        if label == 0:      # entailment: generalise the subject, or weaken the detail
            choices = [(specific_clause, general_clause), (stronger, weaker)]
        elif label == 1:    # neutral: specialise the subject, strengthen the detail, change the subject
            choices = [(general_clause, specific_clause), (weaker, stronger),
                       (specific_clause, _clause(f"the {other}", verb, neg))]
        else:               # contradiction: the same clause with exactly one side negated
            choices = [(specific_clause, _clause(specific, verb, not neg)),
                       (detailed, _clause(specific, verb, not neg, pp))]
        p, h = _pick(choices, rng)
        out.append(EntailmentExample(p, h, label))
    return out
