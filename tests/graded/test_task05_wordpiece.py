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
    assert split("unaffable", vocab) == ["unaff", "##able"]
    vocab = {"a", "aa", "##a", "##aa"}
    assert split("aaa", vocab) == ["aa", "##a"]
    assert split("aaaaa", vocab) == ["aa", "##aa", "##a"]
    assert split("hello", {"hello", "h", "##e", "##llo"}) == ["hello"]


@pytest.mark.task5_1
@pytest.mark.points(2)
def test_continuation_pieces_carry_the_prefix(impl):
    split = impl(MOD).wordpiece_split
    assert split("playing", {"play", "##ing", "ing"}) == ["play", "##ing"]
    # the first piece never carries "##"
    assert split("playing", {"##play", "play", "##ing"}) == ["play", "##ing"]
    # "ing" alone cannot continue a word: only "##ing" can
    assert split("playing", {"play", "ing"}) == ["[UNK]"]
    assert split("aaa", {"a", "##a"}) == ["a", "##a", "##a"]


@pytest.mark.task5_1
@pytest.mark.points(2)
def test_a_partly_matched_word_is_one_unk(impl):
    split = impl(MOD).wordpiece_split
    vocab = {"un", "##aff"}
    assert split("unaffable", vocab) == ["[UNK]"]
    assert split("unaffable", vocab, unk_token="<unk>") == ["<unk>"]
    assert split("xyz", vocab) == ["[UNK]"]
    # a dict token -> id works as the vocabulary too
    assert split("unaff", {"un": 5, "##aff": 7}) == ["un", "##aff"]


@pytest.mark.task5_1
@pytest.mark.points(1)
def test_words_longer_than_max_chars_are_unk(impl):
    split = impl(MOD).wordpiece_split
    vocab = {"a", "##a"}
    assert split("a" * 101, vocab) == ["[UNK]"]
    assert split("a" * 100, vocab) == ["a"] + ["##a"] * 99
    assert split("aaaaaa", vocab, max_chars=5) == ["[UNK]"]
    assert split("aaaaa", vocab, max_chars=5) == ["a", "##a", "##a", "##a", "##a"]


# ---- basic_tokenize -------------------------------------------------------------------------
@pytest.mark.task5_1
@pytest.mark.points(2)
def test_punctuation_is_split_off(impl):
    basic = impl(MOD).basic_tokenize
    assert basic("Hello, World!") == ["hello", ",", "world", "!"]
    assert basic("don't...") == ["don", "'", "t", ".", ".", "."]
    # every ASCII non-alphanumeric printable character counts (BERT), symbols included
    assert basic("a$b+c^d`e~f|g<h") == ["a", "$", "b", "+", "c", "^", "d", "`", "e", "~", "f", "|", "g", "<", "h"]
    # outside ASCII only Unicode punctuation (P*) counts: "¿" and "—" do, "€" and "©" do not
    assert basic("¿qué?") == ["¿", "que", "?"]
    assert basic("a—b") == ["a", "—", "b"]
    assert basic("5€ ©x") == ["5€", "©x"]


@pytest.mark.task5_1
@pytest.mark.points(2)
def test_case_and_accents(impl):
    basic = impl(MOD).basic_tokenize
    assert basic("Héllo Crème ÀÉÎ") == ["hello", "creme", "aei"]
    assert basic("Cafe\u0301") == ["cafe"]  # a decomposed accent goes too
    assert basic("Héllo Crème", strip_accents=False) == ["héllo", "crème"]
    assert basic("Héllo Crème", do_lower_case=False) == ["Héllo", "Crème"]
    assert basic("Héllo Crème", do_lower_case=False, strip_accents=True) == ["Hello", "Creme"]


@pytest.mark.task5_1
@pytest.mark.points(2)
def test_cjk_ideographs_are_words_of_their_own(impl):
    basic = impl(MOD).basic_tokenize
    assert basic("我爱ab北京") == ["我", "爱", "ab", "北", "京"]
    assert basic("東京。") == ["東", "京", "。"]
    # kana and hangul are not CJK ideographs: they stay together
    assert basic("こんにちは 안녕", do_lower_case=False) == ["こんにちは", "안녕"]
    assert basic("我是ab", do_lower_case=False) == ["我", "是", "ab"]


@pytest.mark.task5_1
@pytest.mark.points(1)
def test_text_is_cleaned(impl):
    basic = impl(MOD).basic_tokenize
    # NUL, U+FFFD, controls and format characters are dropped (the word closes up)
    assert basic("a\x00b\ufffdc\x07d\u200be") == ["abcde"]
    # tab, newline, CR and Unicode space separators are whitespace
    assert basic("a\tb\nc\rd\u3000e\xa0f") == ["a", "b", "c", "d", "e", "f"]
    assert basic("  \t\n ") == []
    assert basic("") == []


# ---- the slots inside the library's WordPieceTokenizer ----------------------------------------
@pytest.mark.task5_1
@pytest.mark.points(2)
def test_wordpiece_tokenizer_runs_on_your_code(impl, tmp_path):
    from minilm.tokenizers import WordPieceTokenizer

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "un", "##aff", "##able", "cat", "##s", "!", ","]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    with impl.use("task05_bert"):
        tok = WordPieceTokenizer.from_vocab_file(tmp_path / "vocab.txt")
        assert tok.tokenize("The Cats, UNAFFABLE! dogs") == ["the", "cat", "##s", ",", "un", "##aff", "##able", "!",
                                                            "[UNK]"]
        assert tok.encode("the [MASK] cats", add_special_tokens=True) == [2, 5, 4, 9, 10, 3]
