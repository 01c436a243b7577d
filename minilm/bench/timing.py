"""Clocks for the benchmark: medians of repeated calls, interleaved comparisons, memory, the machine.

Why medians of interleaved runs: on a shared machine the speed of the same code moves by tens of
percent from one minute to the next. Timing A twenty times and then B twenty times compares two
different machines; alternating between them exposes both to the same conditions, and the median
ignores the steps that another process interrupted.
"""
from __future__ import annotations

import os
import platform
import statistics
import sys
import time

import numba
import numpy as np

from autograd import kernels
from autograd.kernels import runtime


def median_ms(fn, *, repeats: int, warmup: int = 1) -> dict:
    """Call ``fn()`` ``warmup`` times untimed, then ``repeats`` times: median and min in ms."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {"median_ms": 1e3 * statistics.median(times), "min_ms": 1e3 * min(times), "repeats": len(times)}


def interleaved_ms(fns: dict, *, repeats: int, warmup: int = 1, block: int = 1) -> dict:
    """Time several callables in turn: ``{name: {"median_ms", "min_ms", "repeats"}}``.

    ``block=1`` alternates a, b, a, b, ...; ``block=k`` runs k timed calls of a, then k of b, ...,
    each block after one untimed call: the switch-over call absorbs what the other side left
    behind (a thread pool still spinning, caches full of its data), so each side is timed in its
    own steady state and both still see the same minutes of the machine's life.
    """
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times = {name: [] for name in fns}
    while min(len(ts) for ts in times.values()) < max(1, repeats):
        for name, fn in fns.items():
            if block > 1:
                fn()  # the switch-over call, untimed
            for _ in range(min(block, repeats - len(times[name]))):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    return {name: {"median_ms": 1e3 * statistics.median(ts), "min_ms": 1e3 * min(ts), "repeats": len(ts)}
            for name, ts in times.items()}


# ---- memory ----------------------------------------------------------------------------------------
def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_mb() -> float | None:
    """This process's resident memory now (Linux; None elsewhere)."""
    kb = _status_kb("VmRSS")
    return None if kb is None else kb / 1024


def peak_rss_mb() -> float | None:
    """The most resident memory this process has had (since the last ``reset_peak_rss``)."""
    kb = _status_kb("VmHWM")
    if kb is None:
        try:
            import resource  # POSIX only: imported where Windows never gets to
            kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: KiB (macOS: bytes)
            if sys.platform == "darwin":
                kb //= 1024
        except (ImportError, OSError):
            return None
    return kb / 1024


def reset_peak_rss() -> bool:
    """Restart the peak-memory count at the current size (Linux ≥ 4.0: ``clear_refs`` with 5)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# ---- the machine -----------------------------------------------------------------------------------
def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _blas_name() -> str:
    """``OpenBLAS 0.3.31 (SkylakeX kernels)``: the library and the kernels it picked for this CPU."""
    name = runtime.blas_config()
    if name:
        parts = name.split()
        return f"{parts[0]} {parts[1]} ({runtime.blas_corename() or parts[-2]} kernels)" if len(parts) > 2 else name
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001  (show_config's layout differs across NumPy versions)
        return "unknown BLAS"


def machine() -> dict:
    """What the numbers were measured on: CPU, cores, load, library versions, thread counts."""
    info = {
        "cpu": _cpu_name(), "cores": os.cpu_count(), "python": platform.python_version(),
        "numpy": np.__version__, "numba": numba.__version__, "blas": _blas_name(),
        "threads": kernels.get_num_threads(), "numba_threading_layer": numba.config.THREADING_LAYER,
        "backend": kernels.get_backend(),
    }
    try:
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    return info


def machine_line(info: dict) -> str:
    """One line for the report: ``AMD EPYC · 2 cores · numpy 2.4 · OpenBLAS ... · 2 threads · load 1.0``."""
    threads = info.get("threads", {})
    parts = [info.get("cpu", "?"), f"{info.get('cores')} cores", f"Python {info.get('python')}",
             f"NumPy {info.get('numpy')} ({info.get('blas')})", f"numba {info.get('numba')}",
             f"threads: numba {threads.get('numba')}, BLAS {threads.get('blas')}"]
    if info.get("torch"):
        parts.append(f"PyTorch {info['torch']} ({info.get('torch_threads')} threads)")
    if info.get("load_average"):
        parts.append(f"load {info['load_average'][0]:.1f}")
    return " · ".join(str(p) for p in parts)
