"""A seeded synthetic corpus whose structure gives every pre-training objective something to learn.

No machine here reaches a dataset host, so minilm writes its own English-like text: lower-case
words separated by single spaces, every sentence ending in a " ." token (so ``str.split()`` gives
clean words and sentence splitting is trivial). What is in it, and which objective it feeds:

* **Documents with a topic.** Each document draws one topic (animals, cities, food, sport, music;
  see ``lexicon.py``) and all its sentences use that topic's nouns and verbs. Whether sentence B
  comes from the same document as A (BERT's NSP) is therefore learnable. Documents also have an
  order signal: the first sentence may open with "this story is about ...", later ones may start
  with "then", the last may start with "in the end" (sentence order, BART's permutation).
* **Subject-verb agreement across distance.** ``the dog near the trees runs .`` and
  ``the dogs near the tree run .``: number is marked on the subject noun and on the verb, with a
  distractor phrase of random number in between. Predicting the *noun's* number needs the verb to
  its right, so bidirectional context (BERT) beats left-to-right (GPT) there.
* **Multi-token names** such as ``new york`` / ``new delhi`` / ``los angeles`` always appear as
  units. Masking both words, BERT predicts them independently and can say "new angeles"; XLNet's
  factorisation models the joint dependency.

    docs = synthetic_corpus(100, rng=np.random.default_rng(0))   # list of documents
    docs[0] -> ['this story is about the farm .', 'the dog near the trees runs .', ...]
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from autograd.errors import MiniLMError

from .lexicon import (ADJECTIVES, CATEGORIES, MULTI_TOKEN_NAMES, PLACE_ADJECTIVES, PREPOSITIONS,
                      TOPIC_NAMES, TOPICS, Topic, article)

__all__ = ["synthetic_corpus", "synthetic_document", "synthetic_sentence", "agreement_probes",
           "AgreementProbe", "word_similarity_pairs", "documents_to_text"]


def _pick(seq, rng: np.random.Generator):
    return seq[int(rng.integers(len(seq)))]


def _noun_phrase(pair: tuple[str, str], plural: bool, rng: np.random.Generator,
                 adjectives=ADJECTIVES) -> str:
    """``the [adjective] noun`` with the noun in the asked number (an adjective 30% of the time)."""
    noun = pair[1] if plural else pair[0]
    if rng.random() < 0.3:
        return f"the {_pick(adjectives, rng)} {noun}"
    return f"the {noun}"


def _verb_phrase(topic: Topic, plural: bool, rng: np.random.Generator) -> str:
    """A verb agreeing with a subject of the given number, with an object when it is transitive."""
    if rng.random() < 0.5:
        sg, pl = _pick(topic.intransitive, rng)
        return pl if plural else sg
    sg, pl, objects = _pick(topic.transitive, rng)
    return f"{pl if plural else sg} {_pick(objects, rng)}"


def synthetic_sentence(topic: str, *, rng: np.random.Generator) -> str:
    """One body sentence of ``topic``; three templates, every one with agreeing number.

    * agreement: ``the [adj] SUBJ [PREP the [adj] PLACE] VERB [OBJ] .`` (the distractor PLACE has
      its own random number: half of the time it is an *attractor* of the other number)
    * a name:    ``the SUBJ from NAME VERB [OBJ] .``
    * existence: ``there is a SUBJ in NAME .`` / ``there are many SUBJS near the PLACE .``
    """
    t = TOPICS[topic]
    plural = bool(rng.random() < 0.5)
    subject = _pick(t.subjects, rng)
    u = rng.random()
    if u < 0.6:
        words = [_noun_phrase(subject, plural, rng)]
        if rng.random() < 0.7:
            place = _noun_phrase(_pick(t.places, rng), bool(rng.random() < 0.5), rng, PLACE_ADJECTIVES)
            words.append(f"{_pick(PREPOSITIONS, rng)} {place}")
        words.append(_verb_phrase(t, plural, rng))
    elif u < 0.8:
        words = [f"the {subject[1] if plural else subject[0]} from {_pick(MULTI_TOKEN_NAMES, rng)}",
                 _verb_phrase(t, plural, rng)]
    else:
        where = (f"in {_pick(MULTI_TOKEN_NAMES, rng)}" if rng.random() < 0.5
                 else f"near the {_pick(t.places, rng)[int(rng.integers(2))]}")
        words = ([f"there are many {subject[1]}"] if plural
                 else [f"there is {article(subject[0])} {subject[0]}"])
        words.append(where)
    return " ".join(words) + " ."


def synthetic_document(topic: str, n_sentences: int, *, rng: np.random.Generator) -> list[str]:
    """``n_sentences`` sentences on one topic, with the order markers described above."""
    t = TOPICS[topic]
    doc = []
    for i in range(n_sentences):
        if i == 0 and rng.random() < 0.5:
            doc.append(f"this story is about {_pick(t.about, rng)} .")
            continue
        s = synthetic_sentence(topic, rng=rng)
        if i == n_sentences - 1 and i > 0 and rng.random() < 0.5:
            s = "in the end " + s
        elif 0 < i < n_sentences - 1 and rng.random() < 0.25:
            s = "then " + s
        doc.append(s)
    return doc


def synthetic_corpus(n_docs: int, *, rng: np.random.Generator, sentences_per_doc=(3, 8),
                     topics=None) -> list[list[str]]:
    """``n_docs`` documents, each a list of sentence strings on one random topic.

    ``sentences_per_doc=(lo, hi)`` is an inclusive range drawn uniformly per document;
    ``topics`` restricts the topics drawn (default: all of ``TOPIC_NAMES``). Same ``rng`` state,
    same corpus.
    """
    lo, hi = sentences_per_doc
    if n_docs < 0 or not 1 <= lo <= hi:
        raise MiniLMError(f"synthetic_corpus: n_docs={n_docs}, sentences_per_doc={sentences_per_doc}: "
                          "expected n_docs >= 0 and 1 <= lo <= hi")
    topics = tuple(topics) if topics is not None else TOPIC_NAMES
    unknown = [t for t in topics if t not in TOPICS]
    if unknown or not topics:
        raise MiniLMError(f"synthetic_corpus: unknown topics {unknown or topics}: "
                          f"expected a non-empty subset of {TOPIC_NAMES}")
    docs = []
    for _ in range(n_docs):
        topic = _pick(topics, rng)
        docs.append(synthetic_document(topic, int(rng.integers(lo, hi + 1)), rng=rng))
    return docs


class AgreementProbe(NamedTuple):
    """A sentence with one word to predict: ``words[index]`` is ``answer``; ``foil`` is the same
    word in the other number. ``target`` is "noun" (only the verb on the right tells its number)
    or "verb" (the subject on the left tells it). ``attractor``: the distractor has the other number."""

    words: list[str]
    index: int
    answer: str
    foil: str
    target: str
    attractor: bool


def agreement_probes(n: int, *, rng: np.random.Generator, target: str = "noun") -> list[AgreementProbe]:
    """``n`` probes ``the SUBJ PREP the PLACE VERB .`` for masked prediction of the subject noun
    (``target="noun"``) or of the verb (``target="verb"``). Half have an attractor."""
    if target not in ("noun", "verb"):
        raise MiniLMError(f"agreement_probes: target={target!r}: expected 'noun' or 'verb'")
    probes = []
    for _ in range(n):
        t = TOPICS[_pick(TOPIC_NAMES, rng)]
        plural, attractor = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        subj, place, verb = _pick(t.subjects, rng), _pick(t.places, rng), _pick(t.intransitive, rng)
        words = ["the", subj[plural], _pick(PREPOSITIONS, rng), "the", place[plural != attractor],
                 verb[plural], "."]
        words = " ".join(words).split()  # "next to" is two words
        pair, index = (subj, 1) if target == "noun" else (verb, len(words) - 2)
        probes.append(AgreementProbe(words, index, pair[plural], pair[not plural], target, attractor))
    return probes


def word_similarity_pairs(*, rng: np.random.Generator, n_pairs: int = 200) -> list[tuple[str, str, int]]:
    """``n_pairs`` word pairs ``(a, b, same)`` from ``CATEGORIES``: half with ``same=1`` (both from
    one category, e.g. dog/cat), half with ``same=0`` (different categories, e.g. dog/singer).
    A good static embedding gives same-category pairs the higher cosine similarity."""
    names = list(CATEGORIES)
    pairs = []
    for k in range(n_pairs):
        if k % 2 == 0:
            words = CATEGORIES[_pick(names, rng)]
            i, j = rng.choice(len(words), size=2, replace=False)
            pairs.append((words[i], words[j], 1))
        else:
            ci, cj = rng.choice(len(names), size=2, replace=False)
            pairs.append((_pick(CATEGORIES[names[ci]], rng), _pick(CATEGORIES[names[cj]], rng), 0))
    return pairs


def documents_to_text(documents: list[list[str]]) -> str:
    """The corpus as one text: one sentence per line, a blank line between documents (the format
    ``read_corpus`` reads back)."""
    return "\n\n".join("\n".join(doc) for doc in documents) + "\n"
