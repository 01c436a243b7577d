"""Graded tests of Task 5.1: BERT's basic tokenizer and greedy longest-match-first WordPiece.

Run on your code with ``pytest --impl exercises -m task5_1``. The slots are in
``exercises/task05_bert/wordpiece.py``: ``basic_tokenize`` and ``wordpiece_split``.
"""
import pytest

MOD = "task05_bert.wordpiece"


# ---- wordpiece_split ------------------------------------------------------------------------
@pytest.mark.task5_1
@pytest.mark.points(2)
def test_wordpiece_takes_the_longest_match(impl):
    split = impl(MOD).wordpiece_split
    vocab = {"u", "un", "unaff", "##n", "##a", "##aff", "##able", "##ble"}
    assert (got := split("unaffable", vocab)) == ["unaff", "##able"], \
        ('wordpiece_split("unaffable", vocab) should be ["unaff", "##able"], got ' + repr(got)
         + ' — take the longest prefix found in the vocabulary, then continue after it')
    vocab = {"a", "aa", "##a", "##aa"}
    assert (got := split("aaa", vocab)) == ["aa", "##a"], \
        ('wordpiece_split("aaa", vocab) should be ["aa", "##a"], got ' + repr(got)
         + ' — take the longest prefix found in the vocabulary, then continue after it')
    assert (got := split("aaaaa", vocab)) == ["aa", "##aa", "##a"], \
        ('wordpiece_split("aaaaa", vocab) should be ["aa", "##aa", "##a"], got ' + repr(got)
         + ' — take the longest prefix found in the vocabulary, then continue after it')
    assert (got := split("hello", {"hello", "h", "##e", "##llo"})) == ["hello"], \
        ('wordpiece_split("hello", {"hello", "h", "##e", "##llo"}) should be ["hello"], got ' + repr(got)
         + ' — take the longest prefix found in the vocabulary, then continue after it')


@pytest.mark.task5_1
@pytest.mark.points(2)
def test_continuation_pieces_carry_the_prefix(impl):
    split = impl(MOD).wordpiece_split
    assert (got := split("playing", {"play", "##ing", "ing"})) == ["play", "##ing"], \
        ('wordpiece_split("playing", {"play", "##ing", "ing"}) should be ["play", "##ing"], got ' + repr(got)
         + ' — every piece after the first is looked up with the ## prefix')
    # the first piece never carries "##"
    assert (got := split("playing", {"##play", "play", "##ing"})) == ["play", "##ing"], \
        ('wordpiece_split("playing", {"##play", "play", "##ing"}) should be ["play", "##ing"], got ' + repr(got)
         + ' — every piece after the first is looked up with the ## prefix')
    # "ing" alone cannot continue a word: only "##ing" can
    assert (got := split("playing", {"play", "ing"})) == ["[UNK]"], \
        ('wordpiece_split("playing", {"play", "ing"}) should be ["[UNK]"], got ' + repr(got)
         + ' — every piece after the first is looked up with the ## prefix')
    assert (got := split("aaa", {"a", "##a"})) == ["a", "##a", "##a"], \
        ('wordpiece_split("aaa", {"a", "##a"}) should be ["a", "##a", "##a"], got ' + repr(got)
         + ' — every piece after the first is looked up with the ## prefix')


@pytest.mark.task5_1
@pytest.mark.points(2)
def test_a_partly_matched_word_is_one_unk(impl):
    split = impl(MOD).wordpiece_split
    vocab = {"un", "##aff"}
    assert (got := split("unaffable", vocab)) == ["[UNK]"], \
        ('wordpiece_split("unaffable", vocab) should be ["[UNK]"], got ' + repr(got)
         + ' — if any part of the word has no match, the whole word is one unk_token')
    assert (got := split("unaffable", vocab, unk_token="<unk>")) == ["<unk>"], \
        ('wordpiece_split("unaffable", vocab, unk_token="<unk>") should be ["<unk>"], got ' + repr(got)
         + ' — if any part of the word has no match, the whole word is one unk_token')
    assert (got := split("xyz", vocab)) == ["[UNK]"], \
        ('wordpiece_split("xyz", vocab) should be ["[UNK]"], got ' + repr(got)
         + ' — if any part of the word has no match, the whole word is one unk_token')
    # a dict token -> id works as the vocabulary too
    assert (got := split("unaff", {"un": 5, "##aff": 7})) == ["un", "##aff"], \
        ('wordpiece_split("unaff", {"un": 5, "##aff": 7}) should be ["un", "##aff"], got ' + repr(got)
         + ' — if any part of the word has no match, the whole word is one unk_token')


@pytest.mark.task5_1
@pytest.mark.points(1)
def test_words_longer_than_max_chars_are_unk(impl):
    split = impl(MOD).wordpiece_split
    vocab = {"a", "##a"}
    assert (got := split("a" * 101, vocab)) == ["[UNK]"], \
        ('wordpiece_split("a" * 101, vocab) should be ["[UNK]"], got ' + repr(got)
         + ' — a word longer than max_chars characters is one [UNK]')
    assert (got := split("a" * 100, vocab)) == ["a"] + ["##a"] * 99, \
        ('wordpiece_split("a" * 100, vocab) should be ["a"] + ["##a"] * 99, got ' + repr(got)
         + ' — a word longer than max_chars characters is one [UNK]')
    assert (got := split("aaaaaa", vocab, max_chars=5)) == ["[UNK]"], \
        ('wordpiece_split("aaaaaa", vocab, max_chars=5) should be ["[UNK]"], got ' + repr(got)
         + ' — a word longer than max_chars characters is one [UNK]')
    assert (got := split("aaaaa", vocab, max_chars=5)) == ["a", "##a", "##a", "##a", "##a"], \
        ('wordpiece_split("aaaaa", vocab, max_chars=5) should be ["a", "##a", "##a", "##a", "##a"], got ' + repr(got)
         + ' — a word longer than max_chars characters is one [UNK]')


# ---- basic_tokenize -------------------------------------------------------------------------
@pytest.mark.task5_1
@pytest.mark.points(2)
def test_punctuation_is_split_off(impl):
    basic = impl(MOD).basic_tokenize
    assert (got := basic("Hello, World!")) == ["hello", ",", "world", "!"], \
        ('basic_tokenize("Hello, World!") should be ["hello", ",", "world", "!"], got ' + repr(got)
         + ' — every punctuation character (Unicode P*, and ASCII symbols such as $+^`~|<) is a token of its own')
    assert (got := basic("don't...")) == ["don", "'", "t", ".", ".", "."], \
        ('basic_tokenize("don\'t...") should be ["don", "\'", "t", ".", ".", "."], got ' + repr(got)
         + ' — every punctuation character (Unicode P*, and ASCII symbols such as $+^`~|<) is a token of its own')
    # every ASCII non-alphanumeric printable character counts (BERT), symbols included
    assert (got := basic("a$b+c^d`e~f|g<h")) == ["a", "$", "b", "+", "c", "^", "d", "`", "e", "~", "f", "|", "g", "<", "h"], \
        (('basic_tokenize("a$b+c^d`e~f|g<h") should be ["a", "$", "b", "+", "c", "^", "d", "`", "e", "~", '
          '"f", "|", "g", "<", "h"], got ') + repr(got)
         + ' — every punctuation character (Unicode P*, and ASCII symbols such as $+^`~|<) is a token of its own')
    # outside ASCII only Unicode punctuation (P*) counts: "¿" and "—" do, "€" and "©" do not
    assert (got := basic("¿qué?")) == ["¿", "que", "?"], \
        ('basic_tokenize("¿qué?") should be ["¿", "que", "?"], got ' + repr(got)
         + ' — every punctuation character (Unicode P*, and ASCII symbols such as $+^`~|<) is a token of its own')
    assert (got := basic("a—b")) == ["a", "—", "b"], \
        ('basic_tokenize("a—b") should be ["a", "—", "b"], got ' + repr(got)
         + ' — every punctuation character (Unicode P*, and ASCII symbols such as $+^`~|<) is a token of its own')
    assert (got := basic("5€ ©x")) == ["5€", "©x"], \
        ('basic_tokenize("5€ ©x") should be ["5€", "©x"], got ' + repr(got)
         + ' — every punctuation character (Unicode P*, and ASCII symbols such as $+^`~|<) is a token of its own')


@pytest.mark.task5_1
@pytest.mark.points(2)
def test_case_and_accents(impl):
    basic = impl(MOD).basic_tokenize
    assert (got := basic("Héllo Crème ÀÉÎ")) == ["hello", "creme", "aei"], \
        ('basic_tokenize("Héllo Crème ÀÉÎ") should be ["hello", "creme", "aei"], got ' + repr(got)
         + ' — lower-case, then NFD-normalise and drop the combining marks (Mn)')
    assert (got := basic("Cafe\u0301")) == ["cafe"], \
        ('basic_tokenize("Cafe\\u0301") should be ["cafe"], got ' + repr(got)
         + ' — lower-case, then NFD-normalise and drop the combining marks (Mn)')  # a decomposed accent goes too
    assert (got := basic("Héllo Crème", strip_accents=False)) == ["héllo", "crème"], \
        ('basic_tokenize("Héllo Crème", strip_accents=False) should be ["héllo", "crème"], got ' + repr(got)
         + ' — lower-case, then NFD-normalise and drop the combining marks (Mn)')
    assert (got := basic("Héllo Crème", do_lower_case=False)) == ["Héllo", "Crème"], \
        ('basic_tokenize("Héllo Crème", do_lower_case=False) should be ["Héllo", "Crème"], got ' + repr(got)
         + ' — lower-case, then NFD-normalise and drop the combining marks (Mn)')
    assert (got := basic("Héllo Crème", do_lower_case=False, strip_accents=True)) == ["Hello", "Creme"], \
        (('basic_tokenize("Héllo Crème", do_lower_case=False, strip_accents=True) should be ["Hello", "Creme"], '
          'got ') + repr(got)
         + ' — lower-case, then NFD-normalise and drop the combining marks (Mn)')


@pytest.mark.task5_1
@pytest.mark.points(2)
def test_cjk_ideographs_are_words_of_their_own(impl):
    basic = impl(MOD).basic_tokenize
    assert (got := basic("我爱ab北京")) == ["我", "爱", "ab", "北", "京"], \
        ('basic_tokenize("我爱ab北京") should be ["我", "爱", "ab", "北", "京"], got ' + repr(got)
         + ' — put spaces around each CJK ideograph (not kana or hangul)')
    assert (got := basic("東京。")) == ["東", "京", "。"], \
        ('basic_tokenize("東京。") should be ["東", "京", "。"], got ' + repr(got)
         + ' — put spaces around each CJK ideograph (not kana or hangul)')
    # kana and hangul are not CJK ideographs: they stay together
    assert (got := basic("こんにちは 안녕", do_lower_case=False)) == ["こんにちは", "안녕"], \
        ('basic_tokenize("こんにちは 안녕", do_lower_case=False) should be ["こんにちは", "안녕"], got ' + repr(got)
         + ' — put spaces around each CJK ideograph (not kana or hangul)')
    assert (got := basic("我是ab", do_lower_case=False)) == ["我", "是", "ab"], \
        ('basic_tokenize("我是ab", do_lower_case=False) should be ["我", "是", "ab"], got ' + repr(got)
         + ' — put spaces around each CJK ideograph (not kana or hangul)')


@pytest.mark.task5_1
@pytest.mark.points(1)
def test_text_is_cleaned(impl):
    basic = impl(MOD).basic_tokenize
    # NUL, U+FFFD, controls and format characters are dropped (the word closes up)
    assert (got := basic("a\x00b\ufffdc\x07d\u200be")) == ["abcde"], \
        ('basic_tokenize("a\\x00b\\ufffdc\\x07d\\u200be") should be ["abcde"], got ' + repr(got)
         + ' — drop NUL, U+FFFD and control/format characters; every whitespace becomes a space')
    # tab, newline, CR and Unicode space separators are whitespace
    assert (got := basic("a\tb\nc\rd\u3000e\xa0f")) == ["a", "b", "c", "d", "e", "f"], \
        ('basic_tokenize("a\\tb\\nc\\rd\\u3000e\\xa0f") should be ["a", "b", "c", "d", "e", "f"], got ' + repr(got)
         + ' — drop NUL, U+FFFD and control/format characters; every whitespace becomes a space')
    assert (got := basic("  \t\n ")) == [], \
        ('basic_tokenize("  \\t\\n ") should be [], got ' + repr(got)
         + ' — drop NUL, U+FFFD and control/format characters; every whitespace becomes a space')
    assert (got := basic("")) == [], \
        ('basic_tokenize("") should be [], got ' + repr(got)
         + ' — drop NUL, U+FFFD and control/format characters; every whitespace becomes a space')


# ---- the slots inside the library's WordPieceTokenizer ----------------------------------------
@pytest.mark.task5_1
@pytest.mark.points(2)
def test_wordpiece_tokenizer_runs_on_your_code(impl, tmp_path):
    from minilm.tokenizers import WordPieceTokenizer

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "un", "##aff", "##able", "cat", "##s", "!", ","]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    with impl.use("task05_bert"):
        tok = WordPieceTokenizer.from_vocab_file(tmp_path / "vocab.txt")
        assert (got := tok.tokenize("The Cats, UNAFFABLE! dogs")) == ["the", "cat", "##s", ",", "un", "##aff", "##able", "!",
                                                            "[UNK]"], \
            (('tok.tokenize("The Cats, UNAFFABLE! dogs") should be ["the", "cat", "##s", ",", "un", "##aff", '
              '"##able", "!", "[UNK]"], got ') + repr(got)
             + ' — WordPieceTokenizer calls basic_tokenize, then wordpiece_split on each word')
        assert (got := tok.encode("the [MASK] cats", add_special_tokens=True)) == [2, 5, 4, 9, 10, 3], \
            ('tok.encode("the [MASK] cats", add_special_tokens=True) should be [2, 5, 4, 9, 10, 3], got ' + repr(got)
             + ' — WordPieceTokenizer calls basic_tokenize, then wordpiece_split on each word')
