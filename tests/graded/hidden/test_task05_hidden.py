"""Held-back tests of module 5: WordPiece's longest match on a vocabulary with nested pieces."""
import pytest


@pytest.mark.hidden
@pytest.mark.task5_1
def test_wordpiece_longest_match_nested_vocab(impl):
    split = impl("task05_bert.wordpiece").wordpiece_split
    vocab = {"play", "p", "pl", "##ing", "##in", "##g", "##ground", "##gr", "##s", "x"}
    got = split("playground", vocab)
    assert got == ["play", "##ground"], (
        f"wordpiece_split('playground') with 'p', 'pl', 'play' and '##gr', '##ground' in the vocabulary gave {got}, "
        f"expected ['play', '##ground']: try the longest piece first (end = len(word) downwards)")
    got = split("plays", vocab)
    assert got == ["play", "##s"], f"wordpiece_split('plays') gave {got}, expected ['play', '##s'] (## on later pieces)"
    got = split("playx", vocab)
    assert got == ["[UNK]"], (f"wordpiece_split('playx') gave {got}: 'x' exists only as a first piece, '##x' is not in "
                              "the vocabulary, so the whole word is ['[UNK]'], not the pieces found so far")
