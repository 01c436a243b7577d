"""Learning a WordPiece vocabulary from a corpus (what ``WordPieceTokenizer.train`` runs).

Google never released the trainer behind BERT's vocabulary (Schuster & Nakajima 2012 describe a
likelihood criterion). Like Hugging Face's ``WordPieceTrainer``, minilm learns it with the *BPE
merge rule* on ``##``-marked symbols, and keeps only the resulting vocabulary:

1. Count the words (the basic tokenizer's output). Spell each word as its first character
   followed by ``##``-continuation characters: ``cats`` → ``c ##a ##t ##s``.
2. The vocabulary starts as the special tokens, then every symbol seen, sorted.
3. Learn BPE merges on these spellings: repeatedly merge the adjacent pair with the highest count
   (each occurrence weighted by its word's count), ties to the pair that sorts first, until no
   pair occurs ``min_frequency`` times. This is Task 6.2's ``train_merges``
   (``solutions/task06_roberta/bpe.py``), called here, not copied: it joins two symbols by
   concatenation, ``c`` + ``##a`` → ``c##a``, and :func:`piece` reads that as the piece ``ca``
   (``##t`` + ``##s`` → ``##t##s`` is ``##ts``).
4. Append each merged piece not yet in the vocabulary, in the order learned, until the vocabulary
   has ``vocab_size`` tokens.

The merges themselves are thrown away: at encode time WordPiece cuts words greedily by longest
match (Task 5.1), which need not follow the merge order. The alphabet is always kept whole, so
the vocabulary can exceed a tiny ``vocab_size``, and every word made of seen characters can be
encoded without ``[UNK]``.

**Ties** compare the concatenated spellings (``c##a`` for ``ca``). That is the order of the pieces
themselves for every word the basic tokenizer gives (``#`` is punctuation, a word of its own); only
a word that starts with ``#`` and goes on (``#ab``, possible in a hand-made ``word_counts``) can
sort differently.
"""
from __future__ import annotations

from autograd.errors import ConfigError

from .bpe import train_merges  # Task 6.2: solutions/task06_roberta/bpe.py

PREFIX = "##"


def spell(word: str) -> tuple[str, ...]:
    """``"cats"`` → ``("c", "##a", "##t", "##s")``."""
    return (word[0], *(PREFIX + c for c in word[1:]))


def piece(spelling: str) -> str:
    """The WordPiece token of a concatenated spelling: ``"c##a##t"`` → ``"cat"``, ``"##t##s"`` →
    ``"##ts"``. A spelling is one character then ``##``+character triples (length 1 + 3k), or only
    triples (length 3k, a continuation piece), so the length says which."""
    if len(spelling) % 3 == 0:  # "##t##s": the characters sit at 2, 5, 8, ...
        return PREFIX + spelling[2::3]
    return spelling[0] + spelling[3::3]  # "c##a##t": at 0, then 3, 6, ...


def learn_wordpiece_vocab(word_counts: dict[str, int], vocab_size: int, special_tokens=(),
                          min_frequency: int = 2) -> list[str]:
    """The vocabulary (a list, id = index) learned from ``word_counts`` (word → count)."""
    if vocab_size < 1:
        raise ConfigError(f"WordPiece training: vocab_size={vocab_size}, expected a positive integer")
    if min_frequency < 1:
        raise ConfigError(f"WordPiece training: min_frequency={min_frequency}, expected >= 1")
    words = {spell(w): count for w, count in word_counts.items() if w}
    alphabet = sorted({s for word in words for s in word} - set(special_tokens))
    start = list(dict.fromkeys(special_tokens)) + alphabet
    n_merges = vocab_size - len(start)  # each merge adds at most one piece
    while True:
        merges = train_merges(words, n_merges, min_frequency=min_frequency) if n_merges > 0 else []
        vocab = _grown(start, merges, vocab_size)
        if len(vocab) >= vocab_size or len(merges) < n_merges:
            return vocab
        # some merges gave a piece the vocabulary had: learn more (the first merges stay the same)
        n_merges += vocab_size - len(vocab)


def _grown(start: list[str], merges, vocab_size: int) -> list[str]:
    """``start`` and then each new piece of ``merges`` in order, up to ``vocab_size`` tokens."""
    vocab, known = list(start), set(start)
    for left, right in merges:
        if len(vocab) >= vocab_size:
            break
        merged = piece(left + right)
        if merged not in known:
            known.add(merged)
            vocab.append(merged)
    return vocab
