"""Unigram segmentation (Kudo 2018, "Subword Regularization", §3): the most probable pieces.

A Unigram model gives every piece x a log-probability s(x); a word w is cut into the pieces
x₁ … x_n (w = x₁ ⋯ x_n) that maximise Σ s(x_i). Viterbi finds them in one left-to-right pass:

    best[0] = 0,   best[i] = max over j < i with w[j:i] in the vocabulary of best[j] + s(w[j:i])

and the argmax pointers, read from the end, give the pieces. A character that no piece covers
becomes the unknown token with score min(s) − 10 (the ``tokenizers`` library's unknown penalty,
``unigram/model.rs``), and consecutive unknowns are fused into one, as there.

Letters: n characters of the word, L the longest piece.
"""
from __future__ import annotations

UNK_PENALTY = 10.0


def unigram_segment(word: str, scores: dict[str, float], unk_token: str | None = None) -> list[str]:
    """The highest-scoring pieces of ``word`` (every piece in ``scores``, or ``unk_token``)."""
    if not word:
        return []
    n = len(word)
    longest = max((len(p) for p in scores), default=1)
    unk_score = min(scores.values(), default=0.0) - UNK_PENALTY
    best = [float("-inf")] * (n + 1)          # best[i]: the score of the best cut of word[:i]
    back = [0] * (n + 1)                      # where the last piece of that cut starts
    unk = [False] * (n + 1)
    best[0] = 0.0
    for i in range(1, n + 1):
        for j in range(max(0, i - longest), i):
            piece = word[j:i]
            if piece in scores and best[j] + scores[piece] > best[i]:
                best[i], back[i], unk[i] = best[j] + scores[piece], j, False
        if best[i] == float("-inf"):          # no piece ends here: one unknown character
            best[i], back[i], unk[i] = best[i - 1] + unk_score, i - 1, True
    pieces, i = [], n
    while i > 0:
        j = back[i]
        pieces.append((word[j:i], unk[i]))
        i = j
    out = []
    for piece, is_unk in reversed(pieces):
        if is_unk:
            if unk_token is None:
                raise ValueError(f"unigram_segment: {piece!r} has no piece and the model no unknown token")
            if out and out[-1] == unk_token:  # fuse consecutive unknowns
                continue
            out.append(unk_token)
        else:
            out.append(piece)
    return out
