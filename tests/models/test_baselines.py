"""The simple baselines (``minilm.downstream.baselines``): bag-of-words logistic regression, most frequent
token, unigram / bigram language models."""
import numpy as np
import pytest

from autograd.errors import MiniLMError
from minilm.downstream.baselines import BagOfWordsClassifier, MostFrequentToken, NGramLM, tokens_of
from minilm.data import sentiment_dataset


# ---- bag of words -------------------------------------------------------------------------------

def test_tokens_of_strings_and_id_sequences():
    assert tokens_of("The movie  was GOOD .") == ["the", "movie", "was", "good", "."]
    assert tokens_of(np.array([3, 1, 3])) == [3, 1, 3]


def test_bow_solves_a_task_that_words_decide():
    texts = ["good film", "great film", "bad film", "awful film", "good show", "awful show"]
    labels = [1, 1, 0, 0, 1, 0]
    bow = BagOfWordsClassifier().fit(texts, labels)
    assert bow.accuracy(texts, labels) == 1.0
    assert bow.predict(["a great great show", "bad"]).tolist() == [1, 0]
    proba = bow.predict_proba(["good"])
    assert proba.shape == (1, 2) and np.allclose(proba.sum(axis=1), 1.0)


def test_bow_unknown_words_are_ignored_and_three_classes_work():
    texts = ["red", "green", "blue", "red red", "blue green blue"]
    labels = [0, 1, 2, 0, 2]
    bow = BagOfWordsClassifier(steps=800).fit(texts, labels)
    assert bow.predict(["red never-seen-word"]).tolist() == [0]
    assert bow.predict_proba(["blue"]).shape == (1, 3)


def test_bow_is_near_chance_on_negation_but_fine_without_it():
    """The reason the fine-tuning experiment exists: the negated items need word *pairs*."""
    rng = np.random.default_rng(0)
    train, test = sentiment_dataset(1500, rng=rng), sentiment_dataset(1000, rng=rng)
    bow = BagOfWordsClassifier().fit([e.text for e in train], [e.label for e in train])
    correct = bow.predict([e.text for e in test]) == np.array([e.label for e in test])
    negated = np.array([e.negated for e in test])
    assert correct[negated].mean() < 0.75   # only the "did not love" phrasing is word-decidable
    # without negation the task is linear: a bag of words solves it
    plain = [e for e in train if not e.negated]
    bow2 = BagOfWordsClassifier().fit([e.text for e in plain], [e.label for e in plain])
    plain_test = [e for e in test if not e.negated]
    assert bow2.accuracy([e.text for e in plain_test], [e.label for e in plain_test]) > 0.97


def test_bow_is_deterministic_and_checks_its_input():
    texts, labels = ["a b", "b c", "c a"], [0, 1, 1]
    p1 = BagOfWordsClassifier().fit(texts, labels).predict_proba(texts)
    p2 = BagOfWordsClassifier().fit(texts, labels).predict_proba(texts)
    assert np.array_equal(p1, p2)
    with pytest.raises(MiniLMError, match="one integer label per example"):
        BagOfWordsClassifier().fit(texts, [0, 1])
    with pytest.raises(MiniLMError, match="integers >= 0"):
        BagOfWordsClassifier().fit(texts, [0, -1, 1])
    with pytest.raises(MiniLMError, match="call fit"):
        BagOfWordsClassifier().predict(texts)
    with pytest.raises(MiniLMError):
        BagOfWordsClassifier(lr=0.0)


# ---- most frequent token ------------------------------------------------------------------------

def test_most_frequent_token_ignores_specials_and_scores_labelled_positions():
    ids = np.array([[0, 5, 7, 7, 1], [0, 7, 5, 1, 1]])   # 0 and 1 are special and most common
    mft = MostFrequentToken().fit(ids, ignore_ids=[0, 1])
    assert mft.token == 7
    labels = np.array([[-100, 7, -100, 5], [7, -100, -100, -100]])
    assert mft.accuracy(labels) == pytest.approx(2 / 3)
    assert mft.accuracy(np.full((2, 3), -100)) == 0.0
    assert MostFrequentToken().fit([[4, 3], [3, 4]]).token == 3  # ties: the smaller id
    with pytest.raises(MiniLMError, match="no tokens"):
        MostFrequentToken().fit([[1, 1]], ignore_ids=[1])


# ---- n-gram language models ---------------------------------------------------------------------

def test_ngram_probabilities_are_normalised():
    rng = np.random.default_rng(1)
    V = 12
    seqs = [rng.integers(0, V, size=rng.integers(2, 20)) for _ in range(30)]
    for order in (1, 2):
        lm = NGramLM(order, alpha=0.5).fit(seqs, V)
        for u in (0, 3, V - 1):
            p = np.exp(lm.log_prob(np.full(V, u), np.arange(V)))
            assert p.sum() == pytest.approx(1.0, abs=1e-12)
    unseen = NGramLM(2, alpha=1.0).fit(np.array([1, 2, 1, 2]), 5)
    p = np.exp(unseen.log_prob(np.full(5, 4), np.arange(5)))  # context 4 never seen: uniform
    assert np.allclose(p, 0.2)


def test_ngram_values_by_hand():
    stream = np.array([0, 1, 0, 1, 0, 2])     # c(0)=3, c(1)=2, c(2)=1; pairs 01 ×2, 10 ×2, 02 ×1
    uni = NGramLM(1, alpha=1.0).fit(stream, 3)
    assert np.exp(uni.log_prob([9 % 3], [0]))[0] == pytest.approx((3 + 1) / (6 + 3))
    bi = NGramLM(2, alpha=1.0).fit(stream, 3)
    assert np.exp(bi.log_prob([0], [1]))[0] == pytest.approx((2 + 1) / (3 + 3))
    assert np.exp(bi.log_prob([1], [2]))[0] == pytest.approx((0 + 1) / (2 + 3))
    assert bi.predict([0, 1, 2]).tolist() == [1, 0, 0]   # 2 was never followed: the commonest token
    x, y = stream[:-1], stream[1:]
    assert bi.loss(x, y) == pytest.approx(-np.mean(bi.log_prob(x, y)))
    assert bi.perplexity(x, y) == pytest.approx(np.exp(bi.loss(x, y)))


def test_bigram_beats_unigram_on_a_sequence_with_order():
    rng = np.random.default_rng(2)
    stream = np.tile(np.arange(8), 200)  # 0 1 2 ... 7 0 1 ...: each token fixes the next one
    x, y = stream[:-1], stream[1:]
    uni, bi = NGramLM(1).fit(stream, 8), NGramLM(2).fit(stream, 8)
    assert bi.loss(x, y) < 0.05 < np.log(8) - 0.01 < uni.loss(x, y)
    assert bi.accuracy(x, y) == 1.0
    labels = y.copy()
    labels[rng.random(len(y)) < 0.5] = -100
    assert bi.loss(x, labels) < 0.05 and bi.accuracy(x, labels) == 1.0


def test_ngram_errors():
    with pytest.raises(MiniLMError, match="order"):
        NGramLM(3)
    with pytest.raises(MiniLMError, match="alpha"):
        NGramLM(2, alpha=0.0)
    lm = NGramLM(2)
    with pytest.raises(MiniLMError, match="fit"):
        lm.loss([0], [1])
    lm.fit([[0, 1, 2]], 3)
    with pytest.raises(MiniLMError, match="outside the vocabulary"):
        lm.loss([0], [3])
    with pytest.raises(MiniLMError, match="outside the vocabulary"):
        lm.loss([-1], [0])
    with pytest.raises(MiniLMError, match="outside the vocabulary"):
        NGramLM(1).fit([[0, 5]], 3)


def test_one_softmax_regression_behind_the_bag_of_words_and_the_probe():
    """The bag of words and the ELECTRA experiments' probe fit the same softmax regression
    (minilm.downstream.probe), not two copies of it."""
    from minilm.downstream import probe
    from minilm.experiments import electra_common
    assert electra_common.probe_accuracy is probe.probe_accuracy
    texts, y = ["good film", "bad film", "good song", "bad song", "fine film"], np.array([1, 0, 1, 0, 1])
    bow = BagOfWordsClassifier(steps=40).fit(texts, y)
    W, b = probe.fit_softmax_regression(bow.features(texts), y, 2, steps=40, lr=1.0, l2=1e-4)
    np.testing.assert_array_equal(bow.W, W, err_msg="BagOfWordsClassifier.fit should be fit_softmax_regression")
    np.testing.assert_array_equal(bow.b, b)
    np.testing.assert_allclose(probe.softmax(np.array([[1e4, 0.0]])), [[1.0, 0.0]])  # no overflow
