"""Graded tests of Task 6.2: byte-level BPE — the byte map, the merge loop, merge training.

Run on your code with ``pytest --impl exercises -m task6_2``. The slots are in
``exercises/task06_roberta/bpe.py``: ``bytes_to_unicode``, ``bpe_merge``, ``train_merges``.
"""
import random

import pytest

MOD = "task06_roberta.bpe"


# ---- bytes_to_unicode -----------------------------------------------------------------------
@pytest.mark.task6_2
@pytest.mark.points(2)
def test_byte_map_is_gpt2s(impl):
    mapping = impl(MOD).bytes_to_unicode()
    assert sorted(mapping) == list(range(256))
    # The bytes that keep their own character are exactly the printable Latin-1 ones other than
    # the space (a second way of writing SPEC's ranges 33-126, 161-172, 174-255).
    kept = [b for b in range(256) if b != 32 and chr(b).isprintable()]
    assert len(kept) == 188
    assert all(mapping[b] == chr(b) for b in kept)
    # the 68 others, in increasing byte order, take chr(256), chr(257), ...
    shifted = [b for b in range(256) if b not in kept]
    assert [mapping[b] for b in shifted] == [chr(256 + k) for k in range(68)]
    assert (mapping[32], mapping[10], mapping[0]) == ("Ġ", "Ċ", "Ā")
    assert (mapping[127], mapping[160], mapping[173]) == ("\u0121", "\u0142", "\u0143")


@pytest.mark.task6_2
@pytest.mark.points(1)
def test_byte_map_is_a_bijection_onto_printable_characters(impl):
    mapping = impl(MOD).bytes_to_unicode()
    chars = list(mapping.values())
    assert len(set(chars)) == 256
    assert all(isinstance(c, str) and len(c) == 1 and c.isprintable() and not c.isspace() for c in chars)


# ---- bpe_merge --------------------------------------------------------------------------------
@pytest.mark.task6_2
@pytest.mark.points(2)
def test_merge_by_rank_not_by_order_or_frequency(impl):
    bpe_merge = impl(MOD).bpe_merge
    ranks = {("a", "b"): 1, ("b", "c"): 0}  # listed in the "wrong" order on purpose
    assert bpe_merge("abc", ranks) == ["a", "bc"]
    assert bpe_merge("abc", {("b", "c"): 1, ("a", "b"): 0}) == ["ab", "c"]
    # "ab" occurs twice in the word, but (b, c) has the lower rank: it goes first
    assert bpe_merge("ababc", ranks) == ["ab", "a", "bc"]


@pytest.mark.task6_2
@pytest.mark.points(2)
def test_merges_do_not_overlap(impl):
    bpe_merge = impl(MOD).bpe_merge
    assert bpe_merge("aaa", {("a", "a"): 0}) == ["aa", "a"]
    assert bpe_merge("aaaa", {("a", "a"): 0}) == ["aa", "aa"]
    assert bpe_merge("aaaa", {("a", "a"): 0, ("aa", "aa"): 1}) == ["aaaa"]
    assert bpe_merge("aaaaa", {("a", "a"): 0, ("aa", "aa"): 1}) == ["aaaa", "a"]
    assert bpe_merge("aaa", {("a", "a"): 0, ("aa", "a"): 1}) == ["aaa"]


@pytest.mark.task6_2
@pytest.mark.points(1)
def test_merge_loop_runs_to_the_end(impl):
    bpe_merge = impl(MOD).bpe_merge
    merges = [("l", "o"), ("lo", "w"), ("e", "r"), ("low", "er"), ("Ġ", "lower")]
    ranks = {pair: k for k, pair in enumerate(merges)}
    assert bpe_merge("Ġlower", ranks) == ["Ġlower"]
    assert bpe_merge("Ġlowest", ranks) == ["Ġ", "low", "e", "s", "t"]
    assert bpe_merge("x", ranks) == ["x"]
    assert bpe_merge("xyz", ranks) == ["x", "y", "z"]
    symbols = ["l", "o", "w"]
    assert bpe_merge(symbols, ranks) == ["low"]
    assert symbols == ["l", "o", "w"]  # the input is not modified


# ---- train_merges -------------------------------------------------------------------------------
@pytest.mark.task6_2
@pytest.mark.points(2)
def test_training_merges_the_most_frequent_pair(impl):
    train = impl(MOD).train_merges
    assert train({"abab": 2, "ab": 1}, 10, min_frequency=2) == [("a", "b"), ("ab", "ab")]
    assert train({"xy": 1, "yz": 3}, 1, min_frequency=1) == [("y", "z")]
    # overlapping occurrences count: "aaa" holds (a, a) twice; merged words are updated
    assert train({"aaa": 1, "b": 5}, 10, min_frequency=2) == [("a", "a")]
    assert train({"aaaa": 2}, 10, min_frequency=2) == [("a", "a"), ("aa", "aa")]
    # words may be given as tuples of symbols
    assert train({("ab", "c"): 2}, 10, min_frequency=2) == [("ab", "c")]


@pytest.mark.task6_2
@pytest.mark.points(2)
def test_training_ties_go_to_the_pair_that_sorts_first(impl):
    train = impl(MOD).train_merges
    assert train({"ba": 2, "ab": 2}, 2, min_frequency=1) == [("a", "b"), ("b", "a")]
    assert train({"ab": 2, "ba": 2}, 2, min_frequency=1) == [("a", "b"), ("b", "a")]
    assert train({"cd": 3, "ab": 3}, 1, min_frequency=1) == [("a", "b")]
    assert train({"abcd": 5}, 2, min_frequency=1) == [("a", "b"), ("ab", "c")]


@pytest.mark.task6_2
@pytest.mark.points(1)
def test_training_stops_and_leaves_its_input_alone(impl):
    train = impl(MOD).train_merges
    assert train({"ab": 1}, 10, min_frequency=2) == []
    assert train({"ab": 1}, 10, min_frequency=1) == [("a", "b")]
    assert train({"abcdef": 9}, 0, min_frequency=1) == []
    assert len(train({"abcdef": 9}, 3, min_frequency=1)) == 3
    counts = {"hello": 3, "help": 2}
    train(counts, 5, min_frequency=1)
    assert counts == {"hello": 3, "help": 2}


@pytest.mark.task6_2
@pytest.mark.points(2)
def test_training_is_deterministic_whatever_the_order(impl):
    train = impl(MOD).train_merges
    rng = random.Random(0)
    words = ["".join(rng.choice("abcd") for _ in range(rng.randrange(2, 7))) for _ in range(60)]
    counts = {w: rng.randrange(1, 4) for w in words}  # small counts: many ties
    reference = train(counts, 30, min_frequency=1)
    assert len(reference) == 30
    for seed in range(3):
        items = list(counts.items())
        random.Random(seed).shuffle(items)
        assert train(dict(items), 30, min_frequency=1) == reference


# ---- the slots inside the library's ByteLevelBPETokenizer ----------------------------------------
@pytest.mark.task6_2
@pytest.mark.points(2)
def test_byte_level_bpe_runs_on_your_code(impl):
    from minilm.tokenizers import ByteLevelBPETokenizer

    corpus = ["the cat sat on the mat.", "the cats eat fish!", "héllo wörld 😀"] * 3
    with impl.use("task06_roberta"):
        tok = ByteLevelBPETokenizer.train(corpus, 300, min_frequency=2)
        assert tok.merges[:2] == [("a", "t"), ("h", "e")]
        assert tok.tokenize("the cat") == ["the", "Ġcat"]
        for text in ["the mat sat", "héllo 😀\n\n  wörld ", "new text: 123!"]:
            assert tok.decode(tok.encode(text)) == text
