"""minilm.data: the seed, the synthetic corpus, the downstream and seq2seq tasks (non-graded)."""
import re

import numpy as np
import pytest

from autograd.errors import MiniLMError
from minilm import data
from minilm.data.downstream import NEGATIVE_WORDS, POSITIVE_WORDS
from minilm.data.lexicon import HYPERNYMS, NOUN_NUMBER, TOPICS, VERB_NUMBER


def test_seed_sentences_are_the_six_of_the_demo():
    assert data.SEED_SENTENCES == ("cats eat fish", "dogs eat meat", "birds eat seeds",
                                   "cats drink milk", "dogs drink water", "birds sing songs")
    docs = data.seed_corpus()
    assert docs == [["cats eat fish", "cats drink milk"], ["dogs eat meat", "dogs drink water"],
                    ["birds eat seeds", "birds sing songs"]]


# ----------------------------------------------------------------------------- synthetic corpus

@pytest.fixture(scope="module")
def corpus():
    return data.synthetic_corpus(300, rng=np.random.default_rng(0))


def test_synthetic_corpus_is_deterministic_per_seed():
    a = data.synthetic_corpus(20, rng=np.random.default_rng(7))
    b = data.synthetic_corpus(20, rng=np.random.default_rng(7))
    c = data.synthetic_corpus(20, rng=np.random.default_rng(8))
    assert a == b
    assert a != c


def test_synthetic_corpus_shape_and_text(corpus):
    assert len(corpus) == 300
    assert all(3 <= len(doc) <= 8 for doc in corpus)
    assert {len(doc) for doc in corpus} == set(range(3, 9))
    for doc in corpus:
        for s in doc:
            assert s.endswith(" .") and s.count(".") == 1, s
            assert re.fullmatch(r"[a-z]+( [a-z]+)* \.", s), s
    docs = data.synthetic_corpus(5, rng=np.random.default_rng(0), sentences_per_doc=(1, 1))
    assert [len(d) for d in docs] == [1] * 5
    assert data.synthetic_corpus(0, rng=np.random.default_rng(0)) == []
    with pytest.raises(MiniLMError, match="sentences_per_doc"):
        data.synthetic_corpus(3, rng=np.random.default_rng(0), sentences_per_doc=(4, 2))
    with pytest.raises(MiniLMError, match="unknown topics"):
        data.synthetic_corpus(3, rng=np.random.default_rng(0), topics=["weather"])


def test_each_document_keeps_to_one_topic(corpus):
    topic_of = {}
    for name, t in TOPICS.items():
        for pair in t.subjects + t.places:
            for w in pair:
                topic_of[w] = name
    for name, t in TOPICS.items():
        for sg, pl, *_ in t.intransitive + t.transitive:
            topic_of.setdefault(sg, name)
            topic_of.setdefault(pl, name)
    seen = set()
    for doc in corpus:
        topics = {topic_of[w] for s in doc for w in s.split() if w in topic_of}
        assert len(topics) <= 1, (doc, topics)
        seen |= topics
    assert seen == set(TOPICS)
    only = data.synthetic_corpus(10, rng=np.random.default_rng(1), topics=["sport"])
    assert {topic_of[w] for d in only for s in d for w in s.split() if w in topic_of} == {"sport"}


def test_subject_and_verb_agree_across_the_distractor(corpus):
    checked = attractors = 0
    for doc in corpus:
        for s in doc:
            words = s.split()
            subj = next((i for i, w in enumerate(words) if w in NOUN_NUMBER), None)
            if subj is None:
                continue
            verb = next((i for i in range(subj + 1, len(words)) if words[i] in VERB_NUMBER), None)
            if verb is None:
                continue
            assert NOUN_NUMBER[words[subj]] == VERB_NUMBER[words[verb]], s
            checked += 1
            between = [w for w in words[subj + 1:verb] if w in NOUN_NUMBER]
            attractors += any(NOUN_NUMBER[w] != NOUN_NUMBER[words[subj]] for w in between)
    assert checked > 800 and attractors > 100


def test_multi_token_names_appear_as_units(corpus):
    names = data.multi_token_names()
    assert "new york" in names and "los angeles" in names and "san francisco" in names
    text = " ".join(s for doc in corpus for s in doc)
    for name in names:
        assert f" {name} " in text, f"{name!r} never appears"
    words = text.split()
    seconds = {}
    for name in names:
        first, second = name.split()[:2]
        seconds.setdefault(first, set()).add(second)
    for i, w in enumerate(words[:-1]):
        if w in seconds:  # "new", "los", ... only ever start a name
            assert words[i + 1] in seconds[w], " ".join(words[i - 3:i + 4])
    assert seconds["new"] == {"york", "delhi", "orleans"}
    # every last word of a name comes right after the rest of its name
    for name in names:
        *head, last = name.split()
        for i, w in enumerate(words):
            if w == last:
                assert words[i - len(head):i] == head


def test_documents_have_order_markers(corpus):
    firsts = [doc[0] for doc in corpus]
    assert sum(s.startswith("this story is about") for s in firsts) > 100
    assert not any(s.startswith(("then ", "in the end ")) for s in firsts)
    assert any(doc[-1].startswith("in the end ") for doc in corpus)
    assert all(not s.startswith("this story") for doc in corpus for s in doc[1:])


def test_agreement_probes():
    rng = np.random.default_rng(0)
    for target in ("noun", "verb"):
        probes = data.agreement_probes(200, rng=rng, target=target)
        assert 60 < sum(p.attractor for p in probes) < 140
        for p in probes:
            assert p.words[p.index] == p.answer != p.foil and p.target == target
            table = NOUN_NUMBER if target == "noun" else VERB_NUMBER
            assert table[p.answer] != table[p.foil]
            subj = next(w for w in p.words if w in NOUN_NUMBER)
            verb = next(w for w in p.words if w in VERB_NUMBER)
            assert NOUN_NUMBER[subj] == VERB_NUMBER[verb]
            assert p.words[1] == subj and p.words[-2] == verb
    with pytest.raises(MiniLMError):
        data.agreement_probes(1, rng=rng, target="object")


def test_word_similarity_pairs():
    pairs = data.word_similarity_pairs(rng=np.random.default_rng(0), n_pairs=400)
    category = {w: c for c, words in data.CATEGORIES.items() for w in words}
    assert len(category) == sum(len(v) for v in data.CATEGORIES.values()), "a word in two categories"
    assert sum(same for _, _, same in pairs) == 200
    for a, b, same in pairs:
        assert a != b
        assert same == int(category[a] == category[b])
    # every category word occurs in the corpus, so static vectors can be learned for it
    docs = data.synthetic_corpus(200, rng=np.random.default_rng(1))
    text = set(" ".join(s for d in docs for s in d).split())
    assert set(category) <= text


# ----------------------------------------------------------------------------- downstream tasks

def test_sentiment_labels_follow_polarity_xor_negation():
    ex = data.sentiment_dataset(8000, rng=np.random.default_rng(0))
    assert ex[:100] == data.sentiment_dataset(100, rng=np.random.default_rng(0))
    pos_verbs = {"loved", "liked", "enjoyed", "love", "like", "enjoy"}
    neg_verbs = {"hated", "disliked", "hate", "dislike"}
    for text, label, negated in ex:
        words = set(text.split())
        assert negated == ("not" in words)
        polarity = 1 if words & (set(POSITIVE_WORDS) | pos_verbs) else 0
        assert words & (set(POSITIVE_WORDS) | set(NEGATIVE_WORDS) | pos_verbs | neg_verbs)
        assert label == int(polarity != negated), text
    table = {e.text: e.label for e in ex}
    hand = {"the movie was good .": 1, "the movie was not good .": 0, "the food was not bad .": 1,
            "the food was bad .": 0, "i did not hate the movie .": 1, "i loved the concert .": 1}
    for text, label in hand.items():
        assert table[text] == label, text
    labels, negated = np.array([e.label for e in ex]), np.array([e.negated for e in ex])
    assert abs(labels.mean() - 0.5) < 0.03 and abs(negated.mean() - 0.5) < 0.03


def test_sentiment_negation_defeats_a_bag_of_words():
    ex = data.sentiment_dataset(1500, rng=np.random.default_rng(1))
    y = np.array([e.label for e in ex]) * 2.0 - 1.0

    def fit_accuracy(features):
        vocab = sorted({f for e in ex for f in features(e.text.split())})
        col = {f: i for i, f in enumerate(vocab)}
        X = np.zeros((len(ex), len(vocab) + 1))
        X[:, -1] = 1.0
        for i, e in enumerate(ex):
            for f in features(e.text.split()):
                X[i, col[f]] = 1.0
        w = np.linalg.solve(X.T @ X + 1e-3 * np.eye(X.shape[1]), X.T @ y)  # least squares, a little ridge
        return np.mean((X @ w > 0) == (y > 0))

    def scoped(ws):  # unigrams plus "not_X" for every word X after "not"
        return ws + [f"not_{w}" for w in ws[ws.index("not") + 1:]] if "not" in ws else ws

    unigrams, with_scope = fit_accuracy(lambda ws: ws), fit_accuracy(scoped)
    assert unigrams < 0.85 and with_scope > 0.99, (unigrams, with_scope)


def _parse_clause(s):
    """'the dog does not run near the tree .' -> (subject, verb in 3sg, pp, negated)."""
    words = s.split()[:-1]
    subject = " ".join(words[:2])
    negated = words[2:4] == ["does", "not"]
    rest = words[4:] if negated else words[2:]
    verb = rest[0]
    if negated:  # base -> 3rd singular, through the lexicon
        verb = next(sg for t in TOPICS.values() for sg, pl, *_ in t.intransitive if pl == verb)
    return subject, verb, " ".join(rest[1:]), negated


def _entailment_label(premise, hypothesis):
    """An independent labeller for the constructions the generator uses."""
    (sp, vp, pp_p, np_), (sh, vh, pp_h, nh) = _parse_clause(premise), _parse_clause(hypothesis)
    assert vp == vh
    if np_ != nh:
        assert (sp, pp_p) == (sh, pp_h)
        return 2
    general = {f"{'an' if h[0] in 'aeiou' else 'a'} {h}" for h in HYPERNYMS.values()}
    if sp != sh:
        assert pp_p == pp_h == ""
        if sh in general and HYPERNYMS[sp.split()[1]] == sh.split()[1]:
            return 0
        return 1
    more_p = bool(pp_p) and not pp_h  # the premise has the detail
    assert bool(pp_p) != bool(pp_h)
    return 0 if more_p != np_ else 1


def test_entailment_labels_match_the_constructions():
    ex = data.entailment_dataset(3000, rng=np.random.default_rng(0))
    counts = np.bincount([e.label for e in ex], minlength=3)
    assert np.all(np.abs(counts / len(ex) - 1 / 3) < 0.04)
    for premise, hypothesis, label in ex:
        assert _entailment_label(premise, hypothesis) == label, (premise, hypothesis, label)
    pairs = {(e.premise, e.hypothesis): e.label for e in ex}
    assert data.ENTAILMENT_LABELS == ("entailment", "neutral", "contradiction")
    # negation on both sides appears with every label, so "not" does not give the class away
    both = {e.label for e in ex if "not" in e.premise and "not" in e.hypothesis}
    assert both == {0, 1}
    assert {e.label for e in ex if "not" in e.premise + e.hypothesis} == {0, 1, 2}
    assert len(pairs) > 500


def test_downstream_errors():
    with pytest.raises(MiniLMError, match="sentiment_dataset"):
        data.sentiment_dataset(-1, rng=np.random.default_rng(0))
    with pytest.raises(MiniLMError, match="entailment_dataset"):
        data.entailment_dataset(2.5, rng=np.random.default_rng(0))


# ----------------------------------------------------------------------------- seq2seq tasks

def test_seq2seq_tasks():
    rng = np.random.default_rng(0)
    assert data.seq2seq_target("reverse", ["a", "b", "c"]) == "c b a"
    assert data.seq2seq_target("sort", ["c", "a", "b"]) == "a b c"
    assert data.seq2seq_target("copy", ["c", "a"]) == "c a"
    assert data.seq2seq_target("count", ["c", "a", "b"]) == "3"
    for task in data.SEQ2SEQ_TASKS:
        for src, tgt in data.seq2seq_dataset(task, 50, rng=rng, min_len=2, max_len=5):
            prefix, body = src.split(": ")
            assert prefix == task and 2 <= len(body.split()) <= 5
            assert tgt == data.seq2seq_target(task, body.split())
    mixed = data.seq2seq_dataset("mixed", 200, rng=rng)
    assert {src.split(":")[0] for src, _ in mixed} == set(data.SEQ2SEQ_TASKS)
    assert data.seq2seq_dataset("mixed", 5, rng=np.random.default_rng(3)) == \
        data.seq2seq_dataset("mixed", 5, rng=np.random.default_rng(3))
    with pytest.raises(MiniLMError, match="unknown task"):
        data.seq2seq_dataset("translate", 1, rng=rng)
    with pytest.raises(MiniLMError, match="min_len"):
        data.seq2seq_dataset("copy", 1, rng=rng, min_len=4, max_len=2)
