"""Learning a WordPiece vocabulary from a corpus (what ``WordPieceTokenizer.train`` runs).

Google never released the trainer behind BERT's vocabulary (Schuster & Nakajima 2012 describe a
likelihood criterion). Like Hugging Face's ``WordPieceTrainer``, minilm learns it with the *BPE
merge rule* on ``##``-marked symbols, and keeps only the resulting vocabulary:

1. Count the words (the basic tokenizer's output). Spell each word as its first character
   followed by ``##``-continuation characters: ``cats`` → ``c ##a ##t ##s``.
2. The vocabulary starts as the special tokens, then every symbol seen, sorted.
3. Repeatedly merge the adjacent pair with the highest count (each occurrence weighted by its
   word's count): ``c ##a`` → ``ca``, ``##t ##s`` → ``##ts``. **Ties** go to the pair that sorts
   first as ``(left, right)``, so training is deterministic. A merged symbol not yet in the
   vocabulary is appended to it.
4. Stop when the vocabulary has ``vocab_size`` tokens or no pair occurs ``min_frequency`` times.

The merges themselves are thrown away: at encode time WordPiece cuts words greedily by longest
match (Task 5.1), which need not follow the merge order. The alphabet is always kept whole, so
the vocabulary can exceed a tiny ``vocab_size``, and every word made of seen characters can be
encoded without ``[UNK]``.

Pair counts are updated incrementally (only the words that hold the merged pair are re-counted),
so a corpus of thousands of distinct words trains in about a second.
"""
from __future__ import annotations

from collections import Counter, defaultdict

from autograd.errors import ConfigError

PREFIX = "##"


def spell(word: str) -> tuple[str, ...]:
    """``"cats"`` → ``("c", "##a", "##t", "##s")``."""
    return (word[0], *(PREFIX + c for c in word[1:]))


def join(left: str, right: str) -> str:
    """The merged symbol: ``("c", "##a")`` → ``"ca"``; ``("##t", "##s")`` → ``"##ts"``."""
    return left + right[len(PREFIX):]


def _merge_word(symbols: tuple[str, ...], left: str, right: str) -> tuple[str, ...]:
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == left and symbols[i + 1] == right:
            out.append(join(left, right))
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def learn_wordpiece_vocab(word_counts: dict[str, int], vocab_size: int, special_tokens=(),
                          min_frequency: int = 2) -> list[str]:
    """The vocabulary (a list, id = index) learned from ``word_counts`` (word → count)."""
    if vocab_size < 1:
        raise ConfigError(f"WordPiece training: vocab_size={vocab_size}, expected a positive integer")
    if min_frequency < 1:
        raise ConfigError(f"WordPiece training: min_frequency={min_frequency}, expected >= 1")
    words = [spell(w) for w in word_counts if w]
    counts = [word_counts[w] for w in word_counts if w]
    alphabet = sorted({s for word in words for s in word} - set(special_tokens))
    vocab = list(dict.fromkeys(special_tokens)) + alphabet
    known = set(vocab)

    pair_counts: Counter = Counter()
    where: dict[tuple[str, str], set[int]] = defaultdict(set)  # pair -> ids of words holding it
    for k, word in enumerate(words):
        for pair in zip(word[:-1], word[1:]):
            pair_counts[pair] += counts[k]
            where[pair].add(k)

    while len(vocab) < vocab_size and pair_counts:
        best = min(pair_counts, key=lambda p: (-pair_counts[p], p))
        if pair_counts[best] < min_frequency:
            break
        left, right = best
        for k in sorted(where.pop(best)):
            old = words[k]
            for pair in zip(old[:-1], old[1:]):  # take the word's old pairs out ...
                pair_counts[pair] -= counts[k]
                if pair_counts[pair] <= 0:
                    del pair_counts[pair]
            words[k] = new = _merge_word(old, left, right)
            for pair in zip(new[:-1], new[1:]):  # ... and its new pairs in
                pair_counts[pair] += counts[k]
                where[pair].add(k)
        pair_counts.pop(best, None)
        merged = join(left, right)
        if merged not in known:
            known.add(merged)
            vocab.append(merged)
    return vocab
