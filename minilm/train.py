"""The training loop every family shares: AdamW, warm-up + cosine decay, gradient clipping,
held-out evaluation, atomic checkpoints, exact resume, a progress bar and a loss-curve PNG.

A family supplies a *recipe* (see ``minilm/recipes/``): an object with

    family, model, model_config, tokenizer        what is trained
    batch(rng) -> batch                           one training batch, drawn with ``rng``
    loss(model, batch) -> (loss Tensor, metrics)  the objective (metrics: floats)
    evaluate(model) -> dict                       held-out metrics, including "loss"
    baselines() -> dict                           what the summary compares against

Reproducibility: the batch of step s is drawn with ``default_rng([seed, s])`` and dropout's
generators are reseeded with ``[seed, s, 1]`` before the step, so the same seed gives the same
losses, and a run resumed from a checkpoint continues *exactly* as if it had never stopped.
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from autograd import no_grad, optim
from autograd.errors import CheckpointError, TrainingError
from minilm.checkpoint import load_checkpoint, model_meta, save_checkpoint


@dataclass
class TrainConfig:
    steps: int = 500               # optimizer updates
    lr: float = 3e-3               # peak learning rate (after warm-up)
    weight_decay: float = 0.01     # AdamW's decoupled decay (not on biases and LayerNorm gains)
    warmup: int = 50               # linear warm-up steps, then cosine decay to 10% of lr
    grad_clip: float = 1.0         # global gradient-norm clip (0 = off)
    eval_every: int = 100          # held-out evaluation period (steps)
    checkpoint_every: int = 100    # checkpoint period (steps); the last step always saves
    seed: int = 0                  # everything random derives from this


def _param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 else decay).append(p)  # biases and LayerNorm gains: no decay
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def _reseed_dropout(model, seed, step):
    for m in model.modules():
        if isinstance(getattr(m, "rng", None), np.random.Generator):
            m.rng = np.random.default_rng([seed, step, 1])


def train(recipe, cfg: TrainConfig, out_dir, *, resume: bool = False, progress: bool = True,
          plot: bool = True) -> dict:
    """Train ``recipe.model``; returns the summary dict (``initial_loss``, ``final_loss``, ...)."""
    out_dir = Path(out_dir)
    ckpt_path = out_dir / "checkpoint.npz"
    model = recipe.model
    opt = optim.AdamW(_param_groups(model, cfg.weight_decay), lr=cfg.lr)
    schedule = optim.LambdaLR(opt, lambda s: optim.warmup_cosine(min(s, cfg.steps), min(cfg.warmup, cfg.steps), cfg.steps, min_ratio=0.1))
    history = {"step": [], "loss": [], "eval_step": [], "eval_loss": [], "eval": []}
    start_step = 0
    if resume and ckpt_path.exists():
        ckpt = load_checkpoint(ckpt_path)
        meta = ckpt["meta"]
        if meta.get("family") != recipe.family:
            raise CheckpointError(f"{ckpt_path}: a {meta.get('family')} checkpoint cannot resume a "
                                  f"{recipe.family} run")
        if meta.get("train_config") != asdict(cfg):
            raise CheckpointError(f"{ckpt_path}: saved with {meta.get('train_config')}, but this run asks "
                                  f"for {asdict(cfg)}; resume needs the same settings")
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optim"])
        history, start_step = meta["history"], meta["step"] + 1
        schedule.last_step = start_step
        schedule._apply()
    elif resume:
        print(f"no checkpoint at {ckpt_path}; starting from scratch", file=sys.stderr)

    def evaluate():
        model.eval()
        with no_grad():
            metrics = recipe.evaluate(model)
        model.train()
        return {k: float(v) for k, v in metrics.items()}

    def checkpoint(step):
        meta = {"family": recipe.family, "step": step, "history": history, "train_config": asdict(cfg),
                **model_meta(model, recipe.model_config)}
        save_checkpoint(ckpt_path, model=model, meta=meta, optimizer=opt, tokenizer=recipe.tokenizer)

    if start_step == 0:
        initial = evaluate()
        history["eval_step"].append(0)
        history["eval_loss"].append(initial["loss"])
        history["eval"].append(initial)
    model.train()
    bar = _progress_bar(cfg.steps, start_step, recipe.family, progress)
    t0, tokens = time.time(), 0
    for step in range(start_step, cfg.steps):
        rng = np.random.default_rng([cfg.seed, step])
        _reseed_dropout(model, cfg.seed, step)
        batch = recipe.batch(rng)
        loss, metrics = recipe.loss(model, batch)
        value = loss.item()
        if not math.isfinite(value):
            kept = f"the last good checkpoint is {ckpt_path}" if ckpt_path.exists() else "no checkpoint was written"
            raise TrainingError(f"{recipe.family}: the loss became {value} at step {step}; {kept}. "
                                f"Try a lower --lr.")
        opt.zero_grad()
        loss.backward()
        if cfg.grad_clip:
            optim.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        schedule.step()
        history["step"].append(step)
        history["loss"].append(value)
        tokens += int(metrics.pop("tokens", 0))
        last = step == cfg.steps - 1
        if (step + 1) % cfg.eval_every == 0 or last:
            ev = evaluate()
            history["eval_step"].append(step + 1)
            history["eval_loss"].append(ev["loss"])
            history["eval"].append(ev)
        if (step + 1) % cfg.checkpoint_every == 0 or last:
            checkpoint(step)
        if bar is not None:
            rate = tokens / max(time.time() - t0, 1e-9)
            bar.update(1)
            bar.set_postfix(loss=f"{value:.3f}", tok_s=f"{rate:,.0f}")
    if bar is not None:
        bar.close()
    summary = {
        "family": recipe.family,
        "steps": cfg.steps,
        "initial_loss": history["eval"][0]["loss"],
        "final_loss": history["eval"][-1]["loss"],
        "train_loss_first": history["loss"][0] if history["loss"] else None,
        "train_loss_last10": float(np.mean(history["loss"][-10:])) if history["loss"] else None,
        "metrics": history["eval"][-1],
        "baselines": recipe.baselines(),
        "parameters": int(sum(p.size for p in model.parameters())),
        "checkpoint": str(ckpt_path),
        "seconds": round(time.time() - t0, 1),
    }
    (out_dir / "history.json").write_text(json.dumps(history))
    if plot:
        from minilm.plots import loss_curves
        summary["plot"] = str(loss_curves({recipe.family: history}, out_dir / "loss.png",
                                          title=f"{recipe.family}: training and held-out loss"))
    return summary


def _progress_bar(total, start, family, enabled):
    if not enabled:
        return None
    from tqdm import tqdm
    return tqdm(total=total, initial=start, desc=f"train {family}", file=sys.stderr, dynamic_ncols=True)
