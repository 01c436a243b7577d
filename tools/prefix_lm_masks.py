"""Where does the prefix LM lose to the causal LM? The measurement behind the architectures page's
reason for its second finding.

``minilm experiment architectures`` trains T5's decoder-only stack (2L blocks) on ``reverse`` from
scratch; the prefix LM, whose input is fully visible, learns it several times more slowly than the
causal LM (exact match 21.7 against 76.8 at 500 steps), although the two differ only in the
attention mask. This tool trains the experiment's prefix LM with the mask changed in some blocks
only, each variant from the same initial weights, and prints exact match (greedy decoding on the
experiment's 200 held-out pairs) per seed:

    prefix          every block: the input fully visible (the experiment's prefix LM)
    causal          every block causal (the experiment's causal LM)
    causal-first    the first block causal over the input, the others as the prefix LM
    causal-first2   the first two blocks causal
    causal-rest     every block but the first causal
    self-first      in the first block each input token attends to itself only (no mixing), the
                    target tokens as before
    prefix+sin      the prefix LM with fixed sinusoidal positions added to the embeddings
                    (Vaswani et al. 2017, §3.5): absolute positions that T5's relative bias lacks
    causal+sin      the causal LM with the same

The reading: if making only the first block causal recovers the causal LM's speed and making every
other block causal does not, the lag sits in how the first layer mixes the input. A causal layer
gives each input token its own running average over the tokens up to it, a different mix at every
position, from which a later layer can read where the token stands (a causal stack learns positions
without any position embedding: Haviv et al. 2022); a fully visible one gives every input token
nearly the same average over the whole input at the start. ``self-first`` separates the two: no
mixing, and no running average either.

    python tools/prefix_lm_masks.py                                  # every variant, seeds 0-2, 500 steps
    python tools/prefix_lm_masks.py --variants prefix,causal-first --seeds 0 --steps 1000
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograd import Tensor  # noqa: E402  (after the path)
from minilm.models.prefixlm import T5DecoderOnly, causal_lm_mask  # noqa: E402

# variant -> (blocks made causal over the input, blocks where an input token sees only itself, sinusoids);
# blocks by index (negative counts from the last), or "all", or "rest" (every block but the first)
VARIANTS = {
    "prefix": ((), (), False),
    "causal": ("all", (), False),
    "causal-first": ((0,), (), False),
    "causal-first2": ((0, 1), (), False),
    "causal-rest": ("rest", (), False),
    "self-first": ((), (0,), False),
    "prefix+sin": ((), (), True),
    "causal+sin": ("all", (), True),
}


def sinusoids(T: int, C: int) -> np.ndarray:
    """(T, C) fixed positions: sin(t / 10000^(2i/C)) in the first C/2 columns, cos in the rest."""
    angle = np.arange(T)[:, None] / 10000 ** (2 * np.arange(C // 2)[None, :] / C)         # (T, C/2)
    out = np.zeros((T, C), dtype=np.float32)
    out[:, :C // 2], out[:, C // 2:2 * (C // 2)] = np.sin(angle), np.cos(angle)
    return out


class BlockMaskedDecoderOnly(T5DecoderOnly):
    """The experiment's ``T5DecoderOnly`` prefix LM (same config, same initial weights for a seed)
    with a chosen mask per block: blocks in ``causal`` see the input causally, blocks in
    ``self_only`` let each input token see only itself; ``sin`` adds :func:`sinusoids`."""

    def __init__(self, config, *, rng, causal=(), self_only=(), sin=False):
        super().__init__(config, rng=rng)
        n = len(self.stack.blocks)
        pick = {"all": range(n), "rest": range(1, n)}
        self.causal = {i % n for i in pick.get(causal, causal)}
        self.self_only = {i % n for i in self_only}
        self.sin = sin
        self._prefix_len = None

    def attention_mask(self, T, prefix_len, attention_mask):
        self._prefix_len = np.asarray(prefix_len)                              # (B,): read by logits()
        return super().attention_mask(T, prefix_len, attention_mask)         # (B, 1, T, T)

    def block_masks(self, mask) -> list:
        """One (B, 1, T, T) mask per block, from the prefix LM's ``mask``."""
        B, T = mask.shape[0], mask.shape[-1]
        causal = mask & causal_lm_mask(T)[None, None]                          # (B, 1, T, T)
        query = np.arange(T)
        in_input = query[None, :, None] < np.broadcast_to(self._prefix_len, (B,))[:, None, None]   # (B, T, 1)
        itself = query[:, None] == query[None, :]                              # (T, T)
        only_itself = mask & (~in_input | itself[None])[:, None]               # (B, 1, T, T)
        return [causal if i in self.causal else only_itself if i in self.self_only else mask
                for i in range(len(self.stack.blocks))]

    def logits(self, ids, mask):
        C, stack = self.config.n_embd, self.stack
        x = self.shared(ids)                                                   # (B, T, C)
        if self.sin:
            x = x + Tensor(sinusoids(ids.shape[1], C))
        bias = stack.relative_bias(ids.shape[1], ids.shape[1])                 # (1, H, T, T)
        x = stack.drop(x)
        for block, m in zip(stack.blocks, self.block_masks(mask)):             # T5Stack.forward, a mask per block
            x = block(x, mask=m, bias=bias)
        return (stack.drop(stack.ln_f(x)) * C ** -0.5) @ self.shared.weight.T              # (B, T, V), tied as in T5


def run(variant: str, seed: int, settings: dict) -> float:
    """Exact match (%) of the experiment's prefix-LM row trained with ``variant``'s masks."""
    from minilm.experiments import architectures
    from minilm.train import TrainConfig, train
    if variant not in VARIANTS:
        raise SystemExit(f"prefix_lm_masks: unknown variant {variant!r}; expected one of {list(VARIANTS)}")
    recipe = architectures.build_recipe("prefix LM (2L)", seed, settings)
    causal, self_only, sin = VARIANTS[variant]
    recipe.model = BlockMaskedDecoderOnly(recipe.model.config, rng=np.random.default_rng(seed), causal=causal,
                                          self_only=self_only, sin=sin)   # make_model's rng: the same weights
    s = settings
    cfg = TrainConfig(steps=s["steps"], lr=s["lr"], warmup=min(s["warmup"], s["steps"]), eval_every=s["steps"],
                      checkpoint_every=s["steps"], seed=seed)
    with tempfile.TemporaryDirectory(prefix="minilm-prefix-masks-") as out:
        return 100 * train(recipe, cfg, out, progress=False, plot=False)["metrics"]["exact_match"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)}")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    ap.add_argument("--steps", type=int, default=None, help="training steps (default: the experiment's 500)")
    ap.add_argument("--quick", action="store_true", help="the experiment's --quick sizes (a smoke test)")
    args = ap.parse_args(argv)
    from minilm.experiments import architectures, settings_of
    s = settings_of(architectures.CONFIG.quick() if args.quick else architectures.CONFIG())
    if args.steps is not None:
        s["steps"] = args.steps
    variants = [v.strip() for v in args.variants.split(",")]
    seeds = [int(x) for x in args.seeds.split(",")]
    print(f"exact match (%) after {s['steps']} steps of '{s['task']}'")
    print(f"{'variant':>14}  " + "  ".join(f"{'seed ' + str(k):>7}" for k in seeds) + "     mean      sd")
    start = time.process_time()
    for v in variants:
        scores = [run(v, seed, s) for seed in seeds]
        sd = np.std(scores, ddof=1) if len(scores) > 1 else 0.0
        print(f"{v:>14}  " + "  ".join(f"{x:7.1f}" for x in scores) + f"  {np.mean(scores):7.1f}  {sd:6.1f}",
              flush=True)
    print(f"{(time.process_time() - start) / 60:.1f} CPU-min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
