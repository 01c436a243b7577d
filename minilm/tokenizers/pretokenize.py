"""GPT-2's pre-tokenizer, written as a hand scanner (no ``regex`` package).

GPT-2 (openai/gpt-2 ``src/encoder.py``) cuts text into pre-tokens with the pattern

    's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+

and runs BPE inside each pre-token only, so no merge ever crosses a pre-token boundary. The
standard ``re`` module has no ``\\p{L}``, so :func:`gpt2_pretokenize` walks the text itself and
gives exactly the matches of ``regex.findall(pattern, text)``. Character classes:

* letter ``L``: Unicode category ``L*`` (Lu Ll Lt Lm Lo); number ``N``: ``N*`` (Nd Nl No);
* whitespace ``S``: the Unicode ``White_Space`` property (:data:`WHITESPACE`, what ``\\s`` means in
  ``regex``; note that it excludes U+001C–U+001F, which Python's ``str.isspace`` includes);
* other ``O``: everything else (punctuation, symbols, controls, marks, the apostrophe...).

At each position the first alternative that matches wins, in this order:

1. a contraction ``'s 't 're 've 'm 'll 'd`` (case-sensitive, ASCII apostrophe only, even when
   letters follow: ``"'sam"`` → ``"'s"``, ``"am"``);
2. an optional single space ``' '`` (U+0020 only) then a run of letters;
3. the same for a run of numbers;  4. the same for a run of "other" characters;
5. ``\\s+(?!\\S)``: a run of whitespace that ends the text is taken whole; a run followed by a
   non-space character is taken *minus its last character*, which is left to start the next
   pre-token (so ``"a   b"`` → ``"a"``, ``"  "``, ``" b"``); this alternative fails for a
   single whitespace character followed by a non-space character;
6. ``\\s+``: that single whitespace character.

Every character is in exactly one of L, N, S, O, so the pre-tokens cover the text and
``"".join(gpt2_pretokenize(text)) == text`` for every string.
"""
from __future__ import annotations

import unicodedata

# The Unicode White_Space property: exactly the characters ``\s`` matches in the ``regex`` module.
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000")

CONTRACTIONS = ("s", "t", "re", "ve", "m", "ll", "d")  # after "'", in the pattern's order


def char_class(char: str) -> str:
    """``"S"`` (whitespace), ``"L"`` (letter), ``"N"`` (number) or ``"O"`` (anything else)."""
    if char in WHITESPACE:
        return "S"
    major = unicodedata.category(char)[0]
    return major if major in ("L", "N") else "O"


def gpt2_pretokenize(text: str) -> list[str]:
    """Split ``text`` into GPT-2 pre-tokens (see the module docstring for the exact rules).

    >>> gpt2_pretokenize("Hello world, it's 2024!\\n\\n  ok")
    ['Hello', ' world', ',', ' it', "'s", ' 2024', '!', '\\n\\n ', ' ok']
    """
    classes = [char_class(c) for c in text]
    n = len(text)
    out = []
    i = 0
    while i < n:
        # 1. contractions
        if text[i] == "'":
            suffix = next((s for s in CONTRACTIONS if text.startswith(s, i + 1)), None)
            if suffix is not None:
                out.append(text[i:i + 1 + len(suffix)])
                i += 1 + len(suffix)
                continue
        # 2-4. an optional space, then a run of one class (L, N or O)
        start = i
        if text[i] == " " and i + 1 < n and classes[i + 1] != "S":
            i += 1  # the space joins the run that follows
        kind = classes[i]
        if kind != "S":
            j = i
            while j < n and classes[j] == kind:
                j += 1
            out.append(text[start:j])
            i = j
            continue
        # 5-6. whitespace: find the end j of the run
        j = i
        while j < n and classes[j] == "S":
            j += 1
        if j == n or j - i == 1:
            out.append(text[i:j])  # the run ends the text, or a single space before a non-space
            i = j
        else:
            out.append(text[i:j - 1])  # leave the last whitespace char for the next pre-token
            i = j - 1
    return out
