"""The training loop every run shares — pre-training, fine-tuning, distillation: AdamW, warm-up then
cosine or linear decay, gradient clipping, held-out evaluation, atomic checkpoints, exact resume,
a progress bar and a loss-curve PNG.

Two entry points, one loop (:func:`run_steps`):

* :func:`train` runs a *recipe* (see ``minilm/recipes/``) with evaluation, checkpoints and resume —
  ``minilm train FAMILY`` and the experiments. A recipe is an object with

      family, model, model_config, tokenizer        what is trained
      batch(rng) -> batch                           one training batch, drawn with ``rng``
      loss(model, batch) -> (loss Tensor, metrics)  the objective (metrics: floats)
      evaluate(model) -> dict                       held-out metrics, including "loss"
      baselines() -> dict                           what the summary compares against

* :func:`fit` runs a bare ``step_loss(rng) -> loss`` with no evaluation or checkpoints — the short
  pre-training and fine-tuning inside ``minilm.downstream`` (with :func:`short_run`'s schedule).

Reproducibility: the batch of step s is drawn with ``default_rng([seed, s])`` and dropout's
generators are reseeded with ``[seed, s, 1]`` before the step, so the same seed gives the same
losses, and a run resumed from a checkpoint continues *exactly* as if it had never stopped.
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Callable, Literal, Sequence

import numpy as np

from autograd import no_grad, optim
from autograd.errors import CheckpointError, ConfigError, TrainingError
from minilm.checkpoint import load_checkpoint, model_meta, save_checkpoint

SCHEDULES = ("cosine", "linear")


@dataclass
class TrainConfig:
    steps: int = 500               # optimizer updates
    lr: float = 3e-3               # peak learning rate (after warm-up)
    weight_decay: float = 0.01     # AdamW's decoupled decay (not on biases and LayerNorm gains)
    warmup: int = 50               # linear warm-up steps, then the schedule decays the rate
    grad_clip: float = 1.0         # global gradient-norm clip (0 = off)
    eval_every: int = 100          # held-out evaluation period (steps)
    checkpoint_every: int = 100    # checkpoint period (steps); the last step always saves
    seed: int | Sequence[int] = 0  # everything random derives from this (ints such as [seed, 5] are one seed)
    schedule: Literal[SCHEDULES] = "cosine"  # after warm-up: cosine decay to 10% of lr, or linear decay to 0 (BERT's)

    def __post_init__(self):
        if self.schedule not in SCHEDULES:
            raise ConfigError(f"TrainConfig: schedule={self.schedule!r}, expected one of {SCHEDULES}")


def short_run(steps: int, lr: float, seed) -> TrainConfig:
    """The schedule of the short runs in ``minilm.downstream`` (fine-tuning, and the pre-training
    it starts from): 10% linear warm-up, then linear decay to 0, as BERT pre-trains (Devlin et al.
    2019, §A.2) and fine-tunes (google-research/bert ``optimization.py``, used by both)."""
    return TrainConfig(steps=steps, lr=lr, warmup=max(1, steps // 10), schedule="linear", seed=seed,
                       eval_every=steps, checkpoint_every=steps)


def _param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 else decay).append(p)  # biases and LayerNorm gains: no decay
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def _lr_multiplier(cfg: TrainConfig, step: int) -> float:
    step, warmup = min(step, cfg.steps), min(cfg.warmup, cfg.steps)
    if cfg.schedule == "linear":
        return optim.warmup_linear(step, warmup, cfg.steps)
    return optim.warmup_cosine(step, warmup, cfg.steps, min_ratio=0.1)


def optimizer_for(model, cfg: TrainConfig):
    """``(AdamW, LambdaLR)``: decay on the matrices only, the learning rate of ``cfg.schedule``."""
    opt = optim.AdamW(_param_groups(model, cfg.weight_decay), lr=cfg.lr)
    return opt, optim.LambdaLR(opt, lambda s: _lr_multiplier(cfg, s))


def _reseed_dropout(model, seed, step):
    for m in model.modules():
        if isinstance(getattr(m, "rng", None), np.random.Generator):
            m.rng = np.random.default_rng([seed, step, 1])


def run_steps(model, batch: Callable, loss_of: Callable, opt, schedule, cfg: TrainConfig, *, name: str,
              start: int = 0, on_step: Callable | None = None,
              advice: Callable[[], str] = lambda: "try a lower learning rate",
              progress: bool = False, desc: str | None = None) -> None:
    """Steps ``start .. cfg.steps - 1`` of the loop: draw, forward, backward, clip, update.

    ``batch(rng)`` draws the step's batch, ``loss_of(model, batch) -> (loss Tensor, metrics)`` is the
    objective (a recipe's ``batch`` and ``loss``); a ``"tokens"`` count in the metrics feeds the
    progress bar's tokens/s. After each update ``on_step(step, loss value, metrics)`` runs (the
    caller's evaluation and checkpoints). A non-finite loss raises ``TrainingError`` naming the
    step, followed by ``advice()``."""
    model.train()
    bar = _progress_bar(cfg.steps, start, desc or name, progress)
    t0, tokens = time.time(), 0
    for step in range(start, cfg.steps):
        rng = np.random.default_rng([cfg.seed, step])
        _reseed_dropout(model, cfg.seed, step)
        loss, metrics = loss_of(model, batch(rng))
        value = loss.item()
        if not math.isfinite(value):
            raise TrainingError(f"{name}: the loss became {value} at step {step}; {advice()}")
        opt.zero_grad()
        loss.backward()
        if cfg.grad_clip:
            optim.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        schedule.step()
        tokens += int(metrics.pop("tokens", 0))
        if on_step is not None:
            on_step(step, value, metrics)
        if bar is not None:
            bar.update(1)
            rate = {"tok_s": f"{tokens / max(time.time() - t0, 1e-9):,.0f}"} if tokens else {}
            bar.set_postfix(loss=f"{value:.3f}", **rate)
    if bar is not None:
        bar.close()


def fit(model, step_loss: Callable, cfg: TrainConfig, *, name: str, progress: bool = False) -> list[float]:
    """Train ``model`` on ``step_loss(rng) -> loss Tensor`` for ``cfg.steps`` steps, without
    evaluation or checkpoints; returns the training losses and leaves the model in eval mode."""
    opt, schedule = optimizer_for(model, cfg)
    losses: list[float] = []
    run_steps(model, lambda rng: rng, lambda model, rng: (step_loss(rng), {}), opt, schedule, cfg, name=name,
              on_step=lambda step, value, metrics: losses.append(value), progress=progress)
    model.eval()
    return losses


def train(recipe, cfg: TrainConfig, out_dir, *, resume: bool = False, progress: bool = True,
          plot: bool = True) -> dict:
    """Train ``recipe.model``; returns the summary dict (``initial_loss``, ``final_loss``, ...)."""
    out_dir = Path(out_dir)
    ckpt_path = out_dir / "checkpoint.npz"
    model = recipe.model
    opt, schedule = optimizer_for(model, cfg)
    history, start_step = _new_history(), 0
    if resume:
        history, start_step = _resume(recipe, cfg, ckpt_path, opt, schedule, history)
    if start_step == 0:
        _record_eval(history, 0, _evaluate(recipe))

    def after_step(step, value, metrics):
        history["step"].append(step)
        history["loss"].append(value)
        last = step == cfg.steps - 1
        if (step + 1) % cfg.eval_every == 0 or last:
            _record_eval(history, step + 1, _evaluate(recipe))
        if (step + 1) % cfg.checkpoint_every == 0 or last:
            meta = {"family": recipe.family, "step": step, "history": history, "train_config": asdict(cfg),
                    **model_meta(model, recipe.model_config)}
            save_checkpoint(ckpt_path, model=model, meta=meta, optimizer=opt, tokenizer=recipe.tokenizer)

    def advice():
        kept = f"the last good checkpoint is {ckpt_path}" if ckpt_path.exists() else "no checkpoint was written"
        return f"{kept}. Try a lower --lr."

    t0 = time.time()
    run_steps(model, recipe.batch, recipe.loss, opt, schedule, cfg, name=recipe.family, start=start_step,
              on_step=after_step, advice=advice, progress=progress,
              desc=f"train {recipe.family}")
    summary = _summary(recipe, cfg, history, ckpt_path, seconds=time.time() - t0)
    (out_dir / "history.json").write_text(json.dumps(history))
    if plot:
        from minilm.plots import loss_curves
        summary["plot"] = str(loss_curves({recipe.family: history}, out_dir / "loss.png",
                                          title=f"{recipe.family}: training and held-out loss"))
    return summary


def _new_history() -> dict:
    return {"step": [], "loss": [], "eval_step": [], "eval_loss": [], "eval": []}


def _evaluate(recipe) -> dict:
    model = recipe.model
    model.eval()
    with no_grad():
        metrics = recipe.evaluate(model)
    model.train()
    return {k: float(v) for k, v in metrics.items()}


def _record_eval(history: dict, step: int, metrics: dict) -> None:
    history["eval_step"].append(step)
    history["eval_loss"].append(metrics["loss"])
    history["eval"].append(metrics)


def _resume(recipe, cfg: TrainConfig, ckpt_path: Path, opt, schedule, history: dict) -> tuple[dict, int]:
    """``(history, first step)`` of a run continued from ``ckpt_path`` (the model and optimizer
    restored in place), or of a fresh run if there is no checkpoint."""
    if not ckpt_path.exists():
        print(f"no checkpoint at {ckpt_path}; starting from scratch", file=sys.stderr)
        return history, 0
    ckpt = load_checkpoint(ckpt_path)
    meta = ckpt["meta"]
    if meta.get("family") != recipe.family:
        raise CheckpointError(f"{ckpt_path}: a {meta.get('family')} checkpoint cannot resume a "
                              f"{recipe.family} run")
    # a field added to TrainConfig after the checkpoint was saved takes its default
    saved = {**{f.name: f.default for f in fields(TrainConfig)}, **(meta.get("train_config") or {})}
    if saved != asdict(cfg):
        raise CheckpointError(f"{ckpt_path}: saved with {meta.get('train_config')}, but this run asks "
                              f"for {asdict(cfg)}; resume needs the same settings")
    recipe.model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optim"])
    start_step = meta["step"] + 1
    schedule.last_step = start_step
    schedule._apply()
    return meta["history"], start_step


def _summary(recipe, cfg: TrainConfig, history: dict, ckpt_path: Path, *, seconds: float) -> dict:
    return {
        "family": recipe.family,
        "steps": cfg.steps,
        "initial_loss": history["eval"][0]["loss"],
        "final_loss": history["eval"][-1]["loss"],
        "train_loss_first": history["loss"][0] if history["loss"] else None,
        "train_loss_last10": float(np.mean(history["loss"][-10:])) if history["loss"] else None,
        "metrics": history["eval"][-1],
        "baselines": recipe.baselines(),
        "parameters": int(sum(p.size for p in recipe.model.parameters())),
        "checkpoint": str(ckpt_path),
        "seconds": round(seconds, 1),
    }


def _progress_bar(total, start, desc, enabled):
    if not enabled:
        return None
    from tqdm import tqdm
    return tqdm(total=total, initial=start, desc=desc, file=sys.stderr, dynamic_ncols=True)
