"""Task 4.3: beam search with a length penalty (Hugging Face's algorithm: ``BeamSearchScorer`` and
``BeamHypotheses`` in src/transformers/generation/beam_search.py).

Greedy decoding commits to the best token at every step; beam search keeps the K best partial
sequences ("beams") instead and extends all of them. One step:

1. Each live beam i has a score sᵢ = Σ log p of its generated tokens. Score every extension:
   sᵢ + log p(v | beam i) for all beams i and tokens v — K·V candidates.
2. Take the best 2K candidates (2K, so that K non-EOS candidates remain even if up to K of them
   end with EOS).
3. Walk them best first. A candidate ending with EOS, of rank < K, is a **finished hypothesis**;
   it is scored with the length penalty (Wu et al. 2016 §7 use the GNMT variant; HF's is)

       score = Σ log p / L^length_penalty,   L = number of generated tokens, EOS included

   (the prompt is not counted, as in current Hugging Face). Other candidates become the next live
   beams until there are K.

At the start all K beams hold the same prompt, so the beam scores start at [0, −1e9, …, −1e9]:
otherwise the first step would fill every beam with the same best token (K duplicates).

Log-probabilities are ≤ 0, so sᵢ only falls. length_penalty > 0 divides by a growing L, which
favours longer outputs (1.0 = the average log-probability per token); 0 = plain sum.

Letters: K beams (``num_beams``), V vocabulary, t length so far.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError, ShapeError

INACTIVE = -1e9  # the initial score of beams 1..K-1 (HF)


def beam_search(step_fn, start_ids, *, num_beams, max_new_tokens, eos_id=None, length_penalty=1.0):
    """Task 4.3: the ``num_beams`` best continuations of ``start_ids``; a list of ``(score, ids)``,
    best first.

    ``step_fn(ids)`` takes (K, t) int ids — K = num_beams rows, each a prompt plus its tokens so
    far — and returns (K, V) **log**-probabilities of the next token. ``start_ids`` is the 1-D
    prompt (for an encoder–decoder, the decoder start token). Each returned ``ids`` is a 1-D int64
    array: the prompt, the generated tokens, and the EOS if the hypothesis finished with one.

    Algorithm (module docstring): beams = K copies of the prompt, scores [0, −1e9, …]. For each
    step = 1 .. max_new_tokens (step = tokens generated so far, EOS included):
        a. candidates = scores[:, None] + step_fn(beams), flattened to K·V; take the best 2K
           (beam = index // V, token = index % V);
        b. best first: an EOS candidate of rank < K becomes finished with score
           candidate / step ** length_penalty (an EOS of rank ≥ K is dropped); any other candidate
           extends its beam; stop after K new beams;
        c. keep only the K best finished hypotheses; stop early when there are K and none of the
           live beams can beat the worst of them any more: a live score can only fall, so its best
           possible final score is score / L ** length_penalty with L = max_new_tokens when
           length_penalty > 0, else L = step + 1.
    If the loop runs to max_new_tokens, every live beam is added as a hypothesis with
    L = max_new_tokens. Return the (at most K) best hypotheses, best first.
    ``eos_id=None``: nothing ever finishes early.

    The graded tests use hand-made step functions whose answer is known: distinct beams (the −1e9
    start), the length penalty changing the winner, EOS hypotheses finished with the right score
    (not extended past EOS), and agreement with exhaustive search.
    """
    start = np.asarray(start_ids, dtype=np.int64).reshape(-1)
    if num_beams < 1 or max_new_tokens < 0:
        raise ConfigError(f"beam_search: num_beams={num_beams} must be >= 1 and "
                          f"max_new_tokens={max_new_tokens} >= 0")
    if max_new_tokens == 0:
        return [(0.0, start.copy())]
    # BEGIN SOLUTION
    beams = np.tile(start, (num_beams, 1))                  # (K, t0): K copies of the prompt
    scores = np.full(num_beams, INACTIVE)                   # (K,) Σ log p of each beam
    scores[0] = 0.0                                         # only beam 0 is live at first
    finished = []                                           # (score, ids), best first

    def finish(total_logp, ids, n_generated):
        finished.append((float(total_logp) / n_generated ** length_penalty, ids))
        finished.sort(key=lambda h: -h[0])
        del finished[num_beams:]                            # keep the K best

    for step in range(1, max_new_tokens + 1):
        logp = np.asarray(step_fn(beams), dtype=np.float64)  # (K, V)
        if logp.ndim != 2 or logp.shape[0] != num_beams:
            raise ShapeError(f"beam_search: step_fn returned shape {logp.shape}, expected ({num_beams}, V)")
        V = logp.shape[1]
        candidates = (scores[:, None] + logp).reshape(-1)    # (K·V,)
        best = np.argsort(-candidates, kind="stable")[: 2 * num_beams]
        new_beams, new_scores = [], []
        for rank, flat in enumerate(best):
            beam, token = divmod(int(flat), V)
            ids = np.append(beams[beam], token)
            if eos_id is not None and token == eos_id:
                if rank < num_beams:
                    finish(candidates[flat], ids, step)
            else:
                new_beams.append(ids)
                new_scores.append(candidates[flat])
            if len(new_beams) == num_beams:
                break
        beams, scores = np.stack(new_beams), np.array(new_scores)
        if len(finished) == num_beams:
            best_len = max_new_tokens if length_penalty > 0 else step + 1
            if finished[-1][0] >= scores.max() / best_len ** length_penalty:
                return finished                             # no live beam can still win
    for total_logp, ids in zip(scores, beams):              # max_new_tokens reached
        finish(total_logp, ids, max_new_tokens)
    return finished
    # END SOLUTION
