"""Task 6.2: byte-level BPE (GPT-2, RoBERTa): the byte map, the merge loop, merge training.

Byte-level BPE (Radford et al. 2019, GPT-2 paper §2.2; openai/gpt-2 ``src/encoder.py``) works on
the UTF-8 *bytes* of the text, so every string can be encoded with a base vocabulary of only 256
symbols and no ``<unk>``. Three pieces:

1. :func:`bytes_to_unicode` gives each byte a printable stand-in character, so that a token can be
   written in ``vocab.json`` / ``merges.txt`` as ordinary text (a space becomes ``Ġ``).
2. :func:`train_merges` learns the merges from word counts (Sennrich et al. 2016): repeatedly
   join the most frequent adjacent pair of symbols into one new symbol.
3. :func:`bpe_merge` applies the learned merges to a new word: the pair whose merge was learned
   *first* (lowest rank) is merged first, everywhere in the word, and so on.

The library (``minilm/tokenizers/bpe.py``) adds the pre-tokenizer, the vocabulary and the ids.
Symbols are plain ``str``; a pair is a tuple ``(left, right)``; ``ranks`` maps a pair to its
0-based position in the merge list (its line in ``merges.txt`` after the ``#version`` header).
"""
from __future__ import annotations


def bytes_to_unicode() -> dict[int, str]:
    """Task 6.2: the GPT-2 byte → character map (a bijection from 0..255 onto 256 printable chars).

    * The "nice" bytes 33–126 (``!`` … ``~``), 161–172 (``¡`` … ``¬``) and 174–255 (``®`` … ``ÿ``)
      map to the character with the same code point: ``65 → "A"``.
    * The other 68 bytes (0–32, 127–160 and 173: controls, space, DEL, NBSP, soft hyphen), taken in
      **increasing** byte order, map to ``chr(256)``, ``chr(257)``, …: so ``0 → "Ā"`` (U+0100),
      ``10 → "Ċ"`` (newline, U+010A), ``32 → "Ġ"`` (space, U+0120), ``127 → "ġ"`` (U+0121),
      ``173 → "Ń"`` (U+0143).

    Return a dict with the 256 keys 0..255. The graded tests check the whole map, that it is a
    bijection onto printable characters, and the order of the 68 shifted bytes.
    """
    # BEGIN SOLUTION
    nice = set(range(33, 127)) | set(range(161, 173)) | set(range(174, 256))
    mapping = {}
    shift = 0
    for b in range(256):
        if b in nice:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + shift)
            shift += 1
    return mapping
    # END SOLUTION


def bpe_merge(word_chars, ranks: dict[tuple[str, str], int]) -> list[str]:
    """Task 6.2: apply BPE merges to one pre-token (openai/gpt-2, src/encoder.py ``Encoder.bpe``).

    ``word_chars`` is the pre-token as a string or a sequence of symbols (each character of the
    byte-mapped pre-token is one starting symbol); ``ranks[(a, b)]`` is the rank of the merge
    ``a b → ab`` (0 = learned first). Loop:

    1. Among the adjacent pairs of the current symbols, find the one with the **lowest rank**.
    2. If no adjacent pair has a rank, stop.
    3. Merge **every** occurrence of that pair, scanning left to right without overlaps:
       ``a a a`` with the pair ``(a, a)`` becomes ``aa a`` (not ``aa aa``, not ``a aa``).
    4. Repeat until one symbol is left or step 2 stops.

    Return the final symbols as a new list (a one-character word comes back unchanged).
    Example: ``ranks = {("b", "c"): 0, ("a", "b"): 1}``: ``"abc"`` → ``["a", "bc"]`` (``b c``
    has the lower rank, and afterwards ``(a, bc)`` has none).

    The graded tests check: the rank decides, not the order of ``ranks`` or a pair's position in
    the word; non-overlapping left-to-right merging (``"aaa"``, ``"aaaa"``); the input is not
    modified.
    """
    # BEGIN SOLUTION
    word = list(word_chars)
    while len(word) > 1:
        pairs = set(zip(word[:-1], word[1:]))
        best = min(pairs, key=lambda pair: ranks.get(pair, float("inf")))
        if best not in ranks:
            break
        left, right = best
        merged, i = [], 0
        while i < len(word):
            if i + 1 < len(word) and word[i] == left and word[i + 1] == right:
                merged.append(left + right)
                i += 2
            else:
                merged.append(word[i])
                i += 1
        word = merged
    return word
    # END SOLUTION


def train_merges(word_counts, num_merges: int, min_frequency: int = 2) -> list[tuple[str, str]]:
    """Task 6.2: learn up to ``num_merges`` BPE merges from word counts (Sennrich et al. 2016).

    ``word_counts`` maps a word (a string, each character one starting symbol; or a tuple of
    symbols) to how often it occurs. Loop:

    1. Count every adjacent symbol pair over all words, each occurrence weighted by the word's
       count (overlapping occurrences count: ``a a a`` holds ``(a, a)`` twice).
    2. Choose the pair with the **highest count**. **Ties**: the pair that sorts first as a tuple
       of strings, ``min((a, b), ...)`` by Python's string order (so ``("a", "b")`` before
       ``("a", "c")`` before ``("b", "a")``). This makes training deterministic: it never depends
       on the order of a dict or a set.
    3. Stop if there is no pair or its count is below ``min_frequency``.
    4. Append the pair to the merge list, and in every word replace each occurrence of it, left
       to right without overlaps, by the joined symbol. Repeat.

    Return the list of merged pairs, in the order learned (index = rank). Do not modify
    ``word_counts``. Example: ``{"abab": 2, "ab": 1}`` with ``min_frequency=2`` → first
    ``("a", "b")`` (count 5), then ``("ab", "ab")`` (count 2), then no pair is left.

    The graded tests check: the most frequent pair wins, ties by the rule above whatever the
    insertion order, ``min_frequency`` and ``num_merges`` stop it, merged words are updated.
    """
    # BEGIN SOLUTION
    words: dict[tuple[str, ...], int] = {}
    for word, count in word_counts.items():
        key = tuple(word)
        words[key] = words.get(key, 0) + count
    merges = []
    while len(merges) < num_merges:
        pair_counts: dict[tuple[str, str], int] = {}
        for word, count in words.items():
            for pair in zip(word[:-1], word[1:]):
                pair_counts[pair] = pair_counts.get(pair, 0) + count
        if not pair_counts:
            break
        top = max(pair_counts.values())
        if top < min_frequency:
            break
        best = min(pair for pair, count in pair_counts.items() if count == top)  # ties: sorted order
        merges.append(best)
        left, right = best
        new_words: dict[tuple[str, ...], int] = {}
        for word, count in words.items():
            if left not in word:  # cannot hold the pair: keep as is (saves time)
                new_words[word] = new_words.get(word, 0) + count
                continue
            merged, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and word[i] == left and word[i + 1] == right:
                    merged.append(left + right)
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            key = tuple(merged)
            new_words[key] = new_words.get(key, 0) + count
        words = new_words
    return merges
    # END SOLUTION
