"""The GPT-2 pre-tokenizer (minilm/tokenizers/pretokenize.py), a hand scanner for GPT-2's regex

    's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+

The expected splits below are what ``regex.findall`` with that pattern returns (the ``regex``
package is not a dependency; the cases were checked against it once, and each can be checked by
hand against the rules in the module docstring).
"""
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minilm.tokenizers.pretokenize import WHITESPACE, char_class, gpt2_pretokenize

CASES = [
    ('Hello world', ['Hello', ' world']),
    ("it's we're they've I'm you'll he'd don't",
     ['it', "'s", ' we', "'re", ' they', "'ve", ' I', "'m", ' you', "'ll", ' he', "'d", ' don', "'t"]),
    ("'sam 'S 'RE", ["'s", 'am', " '", 'S', " '", 'RE']),  # contractions are lower-case only
    ("rock'n'roll", ['rock', "'", 'n', "'", 'roll']),
    ('a   b', ['a', '  ', ' b']),  # \s+(?!\S) leaves the last space to the word
    ('a \tb', ['a', ' ', '\t', 'b']),
    ('a\t b', ['a', '\t', ' b']),
    ('end  ', ['end', '  ']),
    ('  start', [' ', ' start']),
    ('\n\nline', ['\n', '\n', 'line']),
    ('x\n\ny', ['x', '\n', '\n', 'y']),
    ('1234 56.7', ['1234', ' 56', '.', '7']),
    ('abc123def', ['abc', '123', 'def']),
    (' 123', [' 123']),
    ('hi!!! ok?', ['hi', '!!!', ' ok', '?']),
    (' !!', [' !!']),
    ('héllo wörld', ['héllo', ' wörld']),
    ('中文 字', ['中文', ' 字']),
    ('naïve café', ['naïve', ' café']),
    ('e\u0301', ['e', '\u0301']),  # a combining mark is 'other', not a letter
    ('😀👍🏽', ['😀👍🏽']),
    (' 😀', [' 😀']),
    ('a\x1cb', ['a', '\x1c', 'b']),
    ('a\x1c b', ['a', '\x1c', ' b']),
    ('a\u3000b', ['a', '\u3000', 'b']),
    ('a\xa0b', ['a', '\xa0', 'b']),
    ('', []),
    (' ', [' ']),
    ('  ', ['  ']),
    ('Ⅻ½', ['Ⅻ½']),
    ("x'", ['x', "'"]),
    ("' s", ["'", ' s']),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_gpt2_pretokenize_cases(text, expected):
    assert gpt2_pretokenize(text) == expected


def test_whitespace_is_the_unicode_white_space_property():
    # what \s means in the regex package: str.isspace() minus the four separators U+001C..U+001F
    isspace = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    assert WHITESPACE == isspace - {"\x1c", "\x1d", "\x1e", "\x1f"}
    assert [char_class(c) for c in " aZé5Ⅻ!\x1c\u0301"] == ["S", "L", "L", "L", "N", "N", "O", "O", "O"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(" \t\n'sretvmldA1.!é中\x1c\u3000😀")), max_size=30) | st.text(max_size=30))
def test_pretokens_cover_the_text(text):
    pieces = gpt2_pretokenize(text)
    assert "".join(pieces) == text and all(pieces)
    for piece in pieces:
        # a piece holds one class, apart from a leading space or a contraction's apostrophe
        body = piece[1:] if piece[0] in " '" and len(piece) > 1 else piece
        assert len({char_class(c) for c in body}) == 1, piece
