"""``minilm bench``: how fast the engine trains, beside NumPy's BLAS and (optionally) PyTorch.

What it measures (DESIGN "Performance"; every number is a median of repeated runs):

* ``gpt_mini`` — the reference workload (``workloads.py``): ms per training step, tokens/s; with
  ``vs_torch`` the same model in PyTorch (``minilm/bench/vs_torch.py``, started from our weights),
  timed step for step in turn with ours in this process, and the ratio ours / PyTorch;
* ``bert_mini`` — BERT of the same size with its MLM and NSP heads: ms per step, tokens/s;
* ``kernels`` — each numba kernel against its NumPy twin (``micro.py``);
* ``memory`` and ``startup`` — in fresh processes (``probe.py``): the peak RSS of GPT-mini's
  training steps (ours, and PyTorch's with ``vs_torch``), and the time from an empty interpreter
  to the first finished training step with a cold numba cache (every kernel compiles) and a warm one.

``run()`` returns one dict (what ``minilm bench --json`` prints); ``report.format_table`` turns it
into the text table. Progress goes to ``log`` (stderr by default).
"""
from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, field

from autograd import kernels  # first: autograd sets OpenBLAS's thread timeout before NumPy loads (tensor.py)

from . import micro, probe, report, timing, workloads
from .workloads import TINY, Sizes

PARTS = ("gpt", "bert", "kernels", "memory", "startup")


@dataclass
class BenchConfig:
    sizes: Sizes = field(default_factory=Sizes)
    steps: int = 20           # timed training steps (median), after ``warmup`` untimed ones
    warmup: int = 3
    block: int = 5            # ours and PyTorch take turns in blocks of this many steps (timing.py)
    vs_torch: bool = False
    threads: int | None = None  # numba and BLAS threads (and PyTorch's); None: leave the defaults
    parts: tuple = PARTS
    kernel_repeats: int = 20
    matmul_sizes: tuple = micro.MATMUL_SIZES
    attention_batch: tuple | None = micro.ATTENTION_BATCH
    seed: int = 0

    @classmethod
    def quick(cls, **overrides) -> "BenchConfig":
        """Tiny sizes and few repeats: checks that every part runs (tests, a first look)."""
        base = dict(sizes=TINY, steps=2, warmup=1, block=1, kernel_repeats=2, matmul_sizes=(16, 32),
                    attention_batch=(4, 8, 4, 8), parts=("gpt", "bert", "kernels"))
        return cls(**{**base, **overrides})


def _log_to_stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _torch_or_none():
    try:
        import torch  # noqa: F401  (optional: the [bench] extra)
    except ImportError:
        return None
    from minilm.bench import vs_torch as bench_torch  # imports torch at its top
    return bench_torch


def _train_steps(cfg: BenchConfig, name: str, bench_torch, log) -> dict:
    """Time one workload (and, for GPT-mini with ``bench_torch``, its PyTorch twin in turn)."""
    work = workloads.WORKLOADS[name](cfg.sizes, seed=cfg.seed)
    fns = {"ours": work.step}
    result = {"workload": work.describe, "tokens_per_step": work.tokens, **work.extra}
    if bench_torch is not None and name == "gpt_mini":
        # the twin starts from our weights, so the first losses of the two must agree
        torch_step, info = bench_torch.gpt_mini(cfg.sizes, seed=cfg.seed, weights=work.model.named_parameters(),
                                                threads=_threads(cfg))
        result.update(info, first_loss=work.step(), torch_first_loss=torch_step())
        fns["torch"] = torch_step
    log(f"bench: {name}: {cfg.warmup} warm-up + {cfg.steps} timed steps"
        + (f" each, ours and PyTorch taking turns in blocks of {cfg.block}" if len(fns) > 1 else ""))
    t = timing.interleaved_ms(fns, repeats=cfg.steps, warmup=cfg.warmup, block=cfg.block if len(fns) > 1 else 1)
    ms = t["ours"]["median_ms"]
    result.update(ms_per_step=ms, min_ms_per_step=t["ours"]["min_ms"], steps=cfg.steps,
                  tokens_per_s=work.tokens / ms * 1e3)
    if "torch" in t:
        tms = t["torch"]["median_ms"]
        result.update(torch_ms_per_step=tms, torch_min_ms_per_step=t["torch"]["min_ms"],
                      torch_tokens_per_s=work.tokens / tms * 1e3, ratio=ms / tms)
    return result


def run(cfg: BenchConfig | None = None, *, log=_log_to_stderr) -> dict:
    """Run the parts of the benchmark that ``cfg.parts`` names; returns the result dict."""
    cfg = cfg or BenchConfig()
    start = time.perf_counter()
    if cfg.threads:
        kernels.set_num_threads(cfg.threads)
    bench_torch = _torch_or_none() if cfg.vs_torch else None
    if cfg.vs_torch and bench_torch is None:
        log("bench: --vs-torch: PyTorch is not installed (pip install 'minilm[bench]', a CPU build of torch); "
            "skipping the comparison")
    out = {"machine": timing.machine(), "config": {"sizes": asdict(cfg.sizes), "steps": cfg.steps,
                                                   "warmup": cfg.warmup, "parts": list(cfg.parts)}}
    if bench_torch is not None:
        out["machine"].update(torch=bench_torch.torch.__version__, torch_threads=_threads(cfg))
    if "gpt" in cfg.parts:
        out["gpt_mini"] = _guard(lambda: _train_steps(cfg, "gpt_mini", bench_torch, log), "gpt_mini", log)
    if "bert" in cfg.parts:
        out["bert_mini"] = _guard(lambda: _train_steps(cfg, "bert_mini", None, log), "bert_mini", log)
    if "kernels" in cfg.parts:
        log("bench: kernels: matmul")
        out["kernels"] = {"matmul": micro.matmul(cfg.matmul_sizes, cfg.attention_batch, seed=cfg.seed)}
        log("bench: kernels: fused ops")
        z = cfg.sizes
        out["kernels"].update(micro.fused_ops(B=z.batch_size, H=z.n_head, T=z.block_size, C=z.n_embd,
                                              V=z.vocab_size, repeats=cfg.kernel_repeats, seed=cfg.seed))
    if "memory" in cfg.parts:
        log("bench: memory: GPT-mini steps in fresh processes")
        out["memory"] = {"minilm": probe.run_probe("minilm", sizes=cfg.sizes, threads=cfg.threads)}
        if bench_torch is not None:
            out["memory"]["torch"] = probe.run_probe("torch", sizes=cfg.sizes, threads=cfg.threads)
    if "startup" in cfg.parts:
        log("bench: startup: first training step with a cold numba cache (everything compiles)")
        cold = probe.run_probe("minilm", sizes=cfg.sizes, cold_cache=True, steps=1, threads=cfg.threads)
        log("bench: startup: ... and with a warm cache")
        warm = probe.run_probe("minilm", sizes=cfg.sizes, steps=1, threads=cfg.threads)
        out["startup"] = {"cold_s": cold.get("seconds_to_first_step"), "warm_s": warm.get("seconds_to_first_step"),
                          **({"error": cold.get("error") or warm.get("error")}
                             if cold.get("error") or warm.get("error") else {})}
    out["targets"] = report.targets(out)
    out["seconds"] = time.perf_counter() - start
    return out


def _threads(cfg) -> int:
    """PyTorch gets as many threads as the engine uses (``--threads``, or the engine's own choice)."""
    return cfg.threads or kernels.get_num_threads()["numba"]


def _guard(fn, name, log):
    """A workload that fails (a model under construction, a missing slot) becomes an error entry."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001  (report it and carry on with the other parts)
        log(f"bench: {name} failed: {type(e).__name__}: {e}")
        return {"error": f"{type(e).__name__}: {e}"}


__all__ = ["BenchConfig", "PARTS", "run", "report", "workloads", "micro", "probe", "timing"]
