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
    assert sorted(mapping) == list(range(256)), \
        "bytes_to_unicode() must map every byte 0..255 (a dict with 256 int keys)"
    # The bytes that keep their own character are exactly the printable Latin-1 ones other than
    # the space (a second way of writing GPT-2's ``bytes_to_unicode`` ranges 33-126, 161-172, 174-255).
    kept = [b for b in range(256) if b != 32 and chr(b).isprintable()]
    assert (got := len(kept)) == 188, \
        ('len(kept) should be 188, got ' + repr(got)
         + (" — GPT-2's bytes_to_unicode: printable Latin-1 bytes (not the space) map to themselves, the "
            "other 68 to chr(256 + k) in byte order"))
    assert all(mapping[b] == chr(b) for b in kept), \
        "bytes_to_unicode(): a printable Latin-1 byte other than the space must map to its own character chr(b)"
    # the 68 others, in increasing byte order, take chr(256), chr(257), ...
    shifted = [b for b in range(256) if b not in kept]
    assert [mapping[b] for b in shifted] == [chr(256 + k) for k in range(68)], \
        ("bytes_to_unicode(): the 68 non-printable bytes (and the space), in increasing byte order, must "
         "map to chr(256), chr(257), ...")
    assert (mapping[32], mapping[10], mapping[0]) == ("Ġ", "Ċ", "Ā"), \
        "bytes_to_unicode(): space, newline and NUL must be Ġ, Ċ and Ā, as in GPT-2, got " + repr((mapping[32], mapping[10], mapping[0]))
    assert (mapping[127], mapping[160], mapping[173]) == ("\u0121", "\u0142", "\u0143"), \
        "bytes_to_unicode(): bytes 127, 160, 173 must be U+0121, U+0142, U+0143, got " + repr((mapping[127], mapping[160], mapping[173]))


@pytest.mark.task6_2
@pytest.mark.points(1)
def test_byte_map_is_a_bijection_onto_printable_characters(impl):
    mapping = impl(MOD).bytes_to_unicode()
    chars = list(mapping.values())
    assert (got := len(set(chars))) == 256, 'len(set(chars)) should be 256, got ' + repr(got)
    assert all(isinstance(c, str) and len(c) == 1 and c.isprintable() and not c.isspace() for c in chars), \
        "bytes_to_unicode(): every value must be one printable, non-space character"


# ---- bpe_merge --------------------------------------------------------------------------------
@pytest.mark.task6_2
@pytest.mark.points(2)
def test_merge_by_rank_not_by_order_or_frequency(impl):
    bpe_merge = impl(MOD).bpe_merge
    ranks = {("a", "b"): 1, ("b", "c"): 0}  # listed in the "wrong" order on purpose
    assert (got := bpe_merge("abc", ranks)) == ["a", "bc"], \
        ('bpe_merge("abc", ranks) should be ["a", "bc"], got ' + repr(got)
         + ' — always merge the adjacent pair with the lowest rank first, wherever it is')
    assert (got := bpe_merge("abc", {("b", "c"): 1, ("a", "b"): 0})) == ["ab", "c"], \
        ('bpe_merge("abc", {("b", "c"): 1, ("a", "b"): 0}) should be ["ab", "c"], got ' + repr(got)
         + ' — always merge the adjacent pair with the lowest rank first, wherever it is')
    # "ab" occurs twice in the word, but (b, c) has the lower rank: it goes first
    assert (got := bpe_merge("ababc", ranks)) == ["ab", "a", "bc"], \
        ('bpe_merge("ababc", ranks) should be ["ab", "a", "bc"], got ' + repr(got)
         + ' — always merge the adjacent pair with the lowest rank first, wherever it is')


@pytest.mark.task6_2
@pytest.mark.points(2)
def test_merges_do_not_overlap(impl):
    bpe_merge = impl(MOD).bpe_merge
    assert (got := bpe_merge("aaa", {("a", "a"): 0})) == ["aa", "a"], \
        ('bpe_merge("aaa", {("a", "a"): 0}) should be ["aa", "a"], got ' + repr(got)
         + ' — merge every non-overlapping occurrence of the best pair, left to right, then look again')
    assert (got := bpe_merge("aaaa", {("a", "a"): 0})) == ["aa", "aa"], \
        ('bpe_merge("aaaa", {("a", "a"): 0}) should be ["aa", "aa"], got ' + repr(got)
         + ' — merge every non-overlapping occurrence of the best pair, left to right, then look again')
    assert (got := bpe_merge("aaaa", {("a", "a"): 0, ("aa", "aa"): 1})) == ["aaaa"], \
        ('bpe_merge("aaaa", {("a", "a"): 0, ("aa", "aa"): 1}) should be ["aaaa"], got ' + repr(got)
         + ' — merge every non-overlapping occurrence of the best pair, left to right, then look again')
    assert (got := bpe_merge("aaaaa", {("a", "a"): 0, ("aa", "aa"): 1})) == ["aaaa", "a"], \
        ('bpe_merge("aaaaa", {("a", "a"): 0, ("aa", "aa"): 1}) should be ["aaaa", "a"], got ' + repr(got)
         + ' — merge every non-overlapping occurrence of the best pair, left to right, then look again')
    assert (got := bpe_merge("aaa", {("a", "a"): 0, ("aa", "a"): 1})) == ["aaa"], \
        ('bpe_merge("aaa", {("a", "a"): 0, ("aa", "a"): 1}) should be ["aaa"], got ' + repr(got)
         + ' — merge every non-overlapping occurrence of the best pair, left to right, then look again')


@pytest.mark.task6_2
@pytest.mark.points(1)
def test_merge_loop_runs_to_the_end(impl):
    bpe_merge = impl(MOD).bpe_merge
    merges = [("l", "o"), ("lo", "w"), ("e", "r"), ("low", "er"), ("Ġ", "lower")]
    ranks = {pair: k for k, pair in enumerate(merges)}
    assert (got := bpe_merge("Ġlower", ranks)) == ["Ġlower"], \
        ('bpe_merge("Ġlower", ranks) should be ["Ġlower"], got ' + repr(got)
         + " — keep merging until no adjacent pair has a rank (and never change the caller's list)")
    assert (got := bpe_merge("Ġlowest", ranks)) == ["Ġ", "low", "e", "s", "t"], \
        ('bpe_merge("Ġlowest", ranks) should be ["Ġ", "low", "e", "s", "t"], got ' + repr(got)
         + " — keep merging until no adjacent pair has a rank (and never change the caller's list)")
    assert (got := bpe_merge("x", ranks)) == ["x"], \
        ('bpe_merge("x", ranks) should be ["x"], got ' + repr(got)
         + " — keep merging until no adjacent pair has a rank (and never change the caller's list)")
    assert (got := bpe_merge("xyz", ranks)) == ["x", "y", "z"], \
        ('bpe_merge("xyz", ranks) should be ["x", "y", "z"], got ' + repr(got)
         + " — keep merging until no adjacent pair has a rank (and never change the caller's list)")
    symbols = ["l", "o", "w"]
    assert (got := bpe_merge(symbols, ranks)) == ["low"], \
        ('bpe_merge(symbols, ranks) should be ["low"], got ' + repr(got)
         + " — keep merging until no adjacent pair has a rank (and never change the caller's list)")
    assert symbols == ["l", "o", "w"], \
        "bpe_merge modified the list it was given: work on a copy"  # the input is not modified


# ---- train_merges -------------------------------------------------------------------------------
@pytest.mark.task6_2
@pytest.mark.points(2)
def test_training_merges_the_most_frequent_pair(impl):
    train = impl(MOD).train_merges
    assert (got := train({"abab": 2, "ab": 1}, 10, min_frequency=2)) == [("a", "b"), ("ab", "ab")], \
        ('train({"abab": 2, "ab": 1}, 10, min_frequency=2) should be [("a", "b"), ("ab", "ab")], got ' + repr(got)
         + ' — count adjacent pairs weighted by word counts, merge the most frequent, recount')
    assert (got := train({"xy": 1, "yz": 3}, 1, min_frequency=1)) == [("y", "z")], \
        ('train({"xy": 1, "yz": 3}, 1, min_frequency=1) should be [("y", "z")], got ' + repr(got)
         + ' — count adjacent pairs weighted by word counts, merge the most frequent, recount')
    # overlapping occurrences count: "aaa" holds (a, a) twice; merged words are updated
    assert (got := train({"aaa": 1, "b": 5}, 10, min_frequency=2)) == [("a", "a")], \
        ('train({"aaa": 1, "b": 5}, 10, min_frequency=2) should be [("a", "a")], got ' + repr(got)
         + ' — count adjacent pairs weighted by word counts, merge the most frequent, recount')
    assert (got := train({"aaaa": 2}, 10, min_frequency=2)) == [("a", "a"), ("aa", "aa")], \
        ('train({"aaaa": 2}, 10, min_frequency=2) should be [("a", "a"), ("aa", "aa")], got ' + repr(got)
         + ' — count adjacent pairs weighted by word counts, merge the most frequent, recount')
    # words may be given as tuples of symbols
    assert (got := train({("ab", "c"): 2}, 10, min_frequency=2)) == [("ab", "c")], \
        ('train({("ab", "c"): 2}, 10, min_frequency=2) should be [("ab", "c")], got ' + repr(got)
         + ' — count adjacent pairs weighted by word counts, merge the most frequent, recount')


@pytest.mark.task6_2
@pytest.mark.points(2)
def test_training_ties_go_to_the_pair_that_sorts_first(impl):
    train = impl(MOD).train_merges
    assert (got := train({"ba": 2, "ab": 2}, 2, min_frequency=1)) == [("a", "b"), ("b", "a")], \
        ('train({"ba": 2, "ab": 2}, 2, min_frequency=1) should be [("a", "b"), ("b", "a")], got ' + repr(got)
         + ' — among pairs with equal counts, take the one that sorts first (min of the tuples)')
    assert (got := train({"ab": 2, "ba": 2}, 2, min_frequency=1)) == [("a", "b"), ("b", "a")], \
        ('train({"ab": 2, "ba": 2}, 2, min_frequency=1) should be [("a", "b"), ("b", "a")], got ' + repr(got)
         + ' — among pairs with equal counts, take the one that sorts first (min of the tuples)')
    assert (got := train({"cd": 3, "ab": 3}, 1, min_frequency=1)) == [("a", "b")], \
        ('train({"cd": 3, "ab": 3}, 1, min_frequency=1) should be [("a", "b")], got ' + repr(got)
         + ' — among pairs with equal counts, take the one that sorts first (min of the tuples)')
    assert (got := train({"abcd": 5}, 2, min_frequency=1)) == [("a", "b"), ("ab", "c")], \
        ('train({"abcd": 5}, 2, min_frequency=1) should be [("a", "b"), ("ab", "c")], got ' + repr(got)
         + ' — among pairs with equal counts, take the one that sorts first (min of the tuples)')


@pytest.mark.task6_2
@pytest.mark.points(1)
def test_training_stops_and_leaves_its_input_alone(impl):
    train = impl(MOD).train_merges
    assert (got := train({"ab": 1}, 10, min_frequency=2)) == [], \
        ('train({"ab": 1}, 10, min_frequency=2) should be [], got ' + repr(got)
         + ' — stop at num_merges or when the best pair count < min_frequency')
    assert (got := train({"ab": 1}, 10, min_frequency=1)) == [("a", "b")], \
        ('train({"ab": 1}, 10, min_frequency=1) should be [("a", "b")], got ' + repr(got)
         + ' — stop at num_merges or when the best pair count < min_frequency')
    assert (got := train({"abcdef": 9}, 0, min_frequency=1)) == [], \
        ('train({"abcdef": 9}, 0, min_frequency=1) should be [], got ' + repr(got)
         + ' — stop at num_merges or when the best pair count < min_frequency')
    assert (got := len(train({"abcdef": 9}, 3, min_frequency=1))) == 3, \
        ('len(train({"abcdef": 9}, 3, min_frequency=1)) should be 3, got ' + repr(got)
         + ' — stop at num_merges or when the best pair count < min_frequency')
    counts = {"hello": 3, "help": 2}
    train(counts, 5, min_frequency=1)
    assert counts == {"hello": 3, "help": 2}, \
        "train_merges modified the word-count dict it was given: copy it (split the words into your own lists)"


@pytest.mark.task6_2
@pytest.mark.points(2)
def test_training_is_deterministic_whatever_the_order(impl):
    train = impl(MOD).train_merges
    rng = random.Random(0)
    words = ["".join(rng.choice("abcd") for _ in range(rng.randrange(2, 7))) for _ in range(60)]
    counts = {w: rng.randrange(1, 4) for w in words}  # small counts: many ties
    reference = train(counts, 30, min_frequency=1)
    assert (got := len(reference)) == 30, \
        'len(reference) should be 30, got ' + repr(got) + ' — break ties by the pair itself, never by dict order'
    for seed in range(3):
        items = list(counts.items())
        random.Random(seed).shuffle(items)
        assert (got := train(dict(items), 30, min_frequency=1)) == reference, \
            ('train(dict(items), 30, min_frequency=1) should be reference, got ' + repr(got)
             + ' — break ties by the pair itself, never by dict order')


# ---- the slots inside the library's ByteLevelBPETokenizer ----------------------------------------
@pytest.mark.task6_2
@pytest.mark.points(2)
def test_byte_level_bpe_runs_on_your_code(impl):
    from minilm.tokenizers import ByteLevelBPETokenizer

    corpus = ["the cat sat on the mat.", "the cats eat fish!", "héllo wörld 😀"] * 3
    with impl.use("task06_roberta"):
        tok = ByteLevelBPETokenizer.train(corpus, 300, min_frequency=2)
        assert (got := tok.merges[:2]) == [("a", "t"), ("h", "e")], \
            ('tok.merges[:2] should be [("a", "t"), ("h", "e")], got ' + repr(got)
             + ' — ByteLevelBPETokenizer uses your bytes_to_unicode, train_merges and bpe_merge')
        assert (got := tok.tokenize("the cat")) == ["the", "Ġcat"], \
            ('tok.tokenize("the cat") should be ["the", "Ġcat"], got ' + repr(got)
             + ' — ByteLevelBPETokenizer uses your bytes_to_unicode, train_merges and bpe_merge')
        for text in ["the mat sat", "héllo 😀\n\n  wörld ", "new text: 123!"]:
            assert (got := tok.decode(tok.encode(text))) == text, \
                ('tok.decode(tok.encode(text)) should be text, got ' + repr(got)
                 + ' — ByteLevelBPETokenizer uses your bytes_to_unicode, train_merges and bpe_merge')
