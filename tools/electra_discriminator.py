"""Has ELECTRA's discriminator learned replaced-token detection? The measurements behind the caveat
on the ELECTRA experiments' pages (``electra_common.DISCRIMINATOR_CAVEAT``).

For each seed it pre-trains the electra-ablation's ELECTRA row (the recipe's settings, with the
options given here) and prints, on the recipe's held-out blocks:

* ``L_disc``: the discriminator's held-out loss (nats per token), beside ``H(base)``, the loss of a
  detector that has learned nothing but the replaced share r: H(r) = −r·ln r − (1 − r)·ln(1 − r).
  L_disc ≈ H(base) means the discriminator tells replaced tokens from originals no better than a
  coin weighted by r;
* ``AUC``: the replaced-token AUC over every real token (0.5 = no skill);
* ``probe``: the entailment probe of the experiment on [h_CLS ; mean h] of the discriminator;
* ``logit probe``: the same probe on six numbers per pair, the replaced-token logits pooled per
  segment (mean, max and the count above 0 over the premise, then over the hypothesis): how much of
  the probe's score the detector's own output could explain;
* ``dim`` and ``dim@init``: how many directions the discriminator's last states spread over, after
  pre-training and at its initialisation: the participation ratio (Σλ)² / Σλ² of the eigenvalues λ of
  their covariance over every real token of the probe's training pairs (about H = 64 for states
  spread evenly, 1 for states along one line). A detector that has squeezed every token onto the
  few directions its replaced/original decision needs is a narrow start for fine-tuning.

``--finetune`` adds the paper's readout for ELECTRA and for electra-ablation's BERT (MLM) row (one
more pre-training per seed): every weight fine-tuned on the probe's pairs at three learning rates,
the one best on 300 dev pairs kept, scored on the probe's test pairs
(``electra_common.finetune_entailment``). ``--pool mean`` puts the new layer on the mean of the last
states instead of h[CLS], the position the detector learns to call "original" on every input.

The defaults are the experiment's: 800 task sentences in the pre-training text, the generator
sampled at temperature 2. ``--temperature 1`` is the paper's sampling, at which the miniature's
discriminator stays at its base rate (``electra_common.DISCRIMINATOR_CAVEAT``); ``--temperature 100``
makes the generator's samples nearly uniform: a control that the code can learn the task when the
replacements are easy to spot.

    python tools/electra_discriminator.py                          # seeds 0-2, the recorded settings
    python tools/electra_discriminator.py --temperature 1 --steps 1200 --seeds 0
    python tools/electra_discriminator.py --temperature 1 --task-text 0      # the paper's T, no task text
    python tools/electra_discriminator.py --temperature 100 --seeds 0
    python tools/electra_discriminator.py --finetune
    python tools/electra_discriminator.py --finetune --lr 1e-3      # or --temperature, --disc-weight, --grad-clip
    python tools/electra_discriminator.py --finetune --pool mean    # read the mean state, not h[CLS]
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def base_rate_entropy(r: float) -> float:
    """H(r) in nats: the cross-entropy of always answering P(replaced) = r when a share r is replaced."""
    return 0.0 if r <= 0 or r >= 1 else -(r * math.log(r) + (1 - r) * math.log(1 - r))


def logit_features(model, ids: np.ndarray, mask: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """(N, 6): per segment (premise 0, hypothesis 1), the mean and max replaced-token logit over its
    real tokens and how many of them the detector calls replaced (logit > 0)."""
    from autograd import no_grad
    with no_grad():
        z = np.asarray(model.discriminator(ids, mask).data, dtype=np.float64)       # (N, T)
    out = []
    for seg in (0, 1):
        k = (mask > 0) & (segments == seg)                                           # (N, T)
        n = np.maximum(k.sum(1), 1)
        out += [np.where(k, z, 0).sum(1) / n, np.where(k, z, -np.inf).max(1), (k & (z > 0)).sum(1)]
    return np.stack(out, 1)


def effective_dimension(states: np.ndarray) -> float:
    """The participation ratio (Σλ)² / Σλ² of the covariance eigenvalues λ of ``states`` (N, H)."""
    centred = states - states.mean(0)
    lam = np.linalg.svd(centred, compute_uv=False) ** 2                          # (min(N, H),)
    return float(lam.sum() ** 2 / (lam ** 2).sum())


def token_states(encode, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(n_tokens, H): ``encode``'s last states at every real token of the pairs."""
    from autograd import no_grad
    with no_grad():
        h = np.asarray(encode(ids, mask).data, dtype=np.float64)                 # (N, T, H)
    return h[np.asarray(mask).astype(bool)]


def segments_of(ids: np.ndarray, sep_id: int) -> np.ndarray:
    """(N, T): 0 up to and including the first [SEP], 1 after it (the hypothesis and its [SEP])."""
    return (np.cumsum(ids == sep_id, axis=1) - (ids == sep_id) > 0).astype(np.int64)


def measure(seed: int, settings: dict, finetune: bool = False, pool: str = "cls") -> dict:
    from minilm.downstream.probe import probe_accuracy
    from minilm.experiments import config_of, electra_ablation
    from minilm.experiments import electra_common as common
    recipe_cfg = config_of(electra_ablation.CONFIG, settings).recipe
    recipe, metrics = common.pretrain(recipe_cfg, seed, task_text=settings["task_text"], objective="electra")
    model, tok = recipe.model, recipe.tokenizer
    model.eval()
    train, test = common.probe_pairs(tok, seed, settings)
    feats = [logit_features(model, ids, mask, segments_of(ids, tok.sep_id)) for ids, mask, *_ in (train, test)]
    out = {"L_disc": metrics["disc_loss"], "H(base)": base_rate_entropy(metrics["replaced_rate"]),
           "AUC": metrics["disc_auc"],
           "probe": 100 * common.entailment_probe(model.encode, tok, seed, settings),
           "logit probe": 100 * probe_accuracy(feats[0], train[2], feats[1], test[2]),
           "dim": effective_dimension(token_states(model.encode, *train[:2]))}
    untrained, _ = common.pretrain(recipe_cfg, seed, steps=0, task_text=settings["task_text"], objective="electra")
    out["dim@init"] = effective_dimension(token_states(untrained.model.encode, *train[:2]))
    if finetune:
        steps = settings["finetune_steps"]                                  # the experiment's readout
        out["ft ELECTRA"] = 100 * common.finetune_entailment(model, "discriminator", tok, seed, settings, steps=steps,
                                                             pool=pool)[0]
        bert_overrides, network = electra_ablation.CONDITIONS["BERT (MLM)"]
        bert, _ = common.pretrain(recipe_cfg, seed, task_text=settings["task_text"], **bert_overrides)
        out["ft BERT"] = 100 * common.finetune_entailment(bert.model, network, bert.tokenizer, seed, settings,
                                                          steps=steps, pool=pool)[0]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    ap.add_argument("--task-text", type=int,
                    help="unlabelled task sentences in the pre-training text (default: the experiment's, 800)")
    ap.add_argument("--steps", type=int, help="pre-training steps (default: the experiment's, 300)")
    ap.add_argument("--lr", type=float, help="peak learning rate (default: the experiment's, 2e-3)")
    ap.add_argument("--temperature", type=float,
                    help="the generator's sampling temperature (default: the experiment's, 2; the paper's is 1)")
    ap.add_argument("--disc-weight", type=float,
                    help="λ, the discriminator loss's weight (default: the experiment's, 50, the paper's)")
    ap.add_argument("--grad-clip", type=float,
                    help="the global gradient-norm clip (default: the experiment's, 1.0; 0 = off)")
    ap.add_argument("--finetune", action="store_true",
                    help="also fine-tune ELECTRA and a BERT (MLM) pre-trained alike (the paper's readout)")
    ap.add_argument("--pool", choices=("cls", "mean"), default="cls",
                    help="--finetune's sentence vector: h[CLS] (the paper's, default) or the mean of the last states")
    ap.add_argument("--quick", action="store_true", help="the experiment's --quick sizes (a smoke test)")
    args = ap.parse_args(argv)
    from minilm.experiments import electra_ablation, settings_of
    cfg = electra_ablation.CONFIG.quick() if args.quick else electra_ablation.CONFIG()
    settings = settings_of(cfg)
    settings.update({k: v for k, v in (("steps", args.steps), ("lr", args.lr), ("task_text", args.task_text),
                                       ("temperature", args.temperature), ("disc_weight", args.disc_weight),
                                       ("grad_clip", args.grad_clip)) if v is not None})
    columns = ["L_disc", "H(base)", "AUC", "probe", "logit probe", "dim", "dim@init"]
    columns += ["ft ELECTRA", "ft BERT"] if args.finetune else []
    print("seed  " + "  ".join(f"{c:>11}" for c in columns))
    for seed in (int(s) for s in args.seeds.split(",")):
        m = measure(seed, settings, args.finetune, args.pool)
        print(f"{seed:>4}  " + "  ".join(f"{m[c]:11.3f}" if c in ("L_disc", "H(base)", "AUC") else f"{m[c]:11.1f}"
                                         for c in columns), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
