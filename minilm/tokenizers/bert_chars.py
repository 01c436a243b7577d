"""BERT's character classes: the four predicates its basic tokenizer is built on.

Source: google-research/bert ``tokenization.py`` (``_is_whitespace``, ``_is_control``,
``_is_punctuation``, ``BasicTokenizer._is_chinese_char``); Hugging Face's ``BertTokenizer`` copies
them unchanged. A vocabulary trained with these rules only gives the right ids if the same rules
split the text, so they are reproduced exactly here, quirks included:

* Tab, newline and carriage return are *whitespace*, not control characters, although Unicode
  files them under ``Cc``.
* Every ASCII character in 33–47, 58–64, 91–96 and 123–126 is *punctuation*, even where Unicode
  says symbol (``$`` is ``Sc``, ``+`` is ``Sm``, ``^`` and `````` are ``Sk``). Outside ASCII only the
  ``P*`` categories count, so ``€`` or ``©`` are not split off.
* "Chinese character" means a CJK Unified Ideograph block (plus compatibility ideographs), not
  Japanese kana or Korean hangul, which BERT writes with space-separated words.

These helpers are not a task: Task 5.1 (``solutions/task05_bert/wordpiece.py``) uses them.
"""
from __future__ import annotations

import unicodedata

# CJK ideograph blocks, exactly the ranges of BERT's ``_is_chinese_char`` (inclusive).
CJK_RANGES = (
    (0x4E00, 0x9FFF),    # CJK Unified Ideographs
    (0x3400, 0x4DBF),    # Extension A
    (0x20000, 0x2A6DF),  # Extension B
    (0x2A700, 0x2B73F),  # Extension C
    (0x2B740, 0x2B81F),  # Extension D
    (0x2B820, 0x2CEAF),  # Extension E
    (0xF900, 0xFAFF),    # CJK Compatibility Ideographs
    (0x2F800, 0x2FA1F),  # CJK Compatibility Ideographs Supplement
)


def is_whitespace(char: str) -> bool:
    """Space, tab, newline, carriage return, or any Unicode space separator (category ``Zs``)."""
    if char in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(char) == "Zs"


def is_control(char: str) -> bool:
    """Any ``C*`` category (control, format, surrogate, private use, unassigned) except tab,
    newline and carriage return, which count as whitespace."""
    if char in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(char).startswith("C")


def is_punctuation(char: str) -> bool:
    """ASCII non-alphanumeric printable characters, and any Unicode ``P*`` category."""
    cp = ord(char)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def is_chinese_char(char: str) -> bool:
    """True for a CJK ideograph (one of :data:`CJK_RANGES`)."""
    cp = ord(char)
    if cp < 0x3400:  # fast exit: every range starts at or above U+3400
        return False
    for lo, hi in CJK_RANGES:
        if lo <= cp <= hi:
            return True
    return False
