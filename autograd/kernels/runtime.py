"""The process settings that decide how fast the kernels run: memory reuse and thread pools.

Nothing here changes a result; each setting removes an overhead that ``minilm bench``'s profile of
a GPT training step found outside the arithmetic.

1. **Freed memory is kept, not handed back to the OS.** A training step allocates and frees a few
   hundred arrays of 0.5–8 MB. glibc's ``malloc`` returns such blocks to the kernel (``munmap`` or
   trimming the heap top) and the next step faults every page back in: ~25,000 page faults per
   GPT-mini step, a third of its time. Raising ``M_MMAP_THRESHOLD`` and ``M_TRIM_THRESHOLD``
   (``mallopt``) makes ``malloc`` reuse those blocks; peak memory is unchanged (it is the same
   set of live arrays). Linux/glibc only; elsewhere nothing happens.
2. **Thread pools that sleep when idle.** NumPy's OpenBLAS and numba's ``parallel=True`` kernels
   each keep a pool of threads. numba's default OpenMP pool busy-waits after every parallel loop,
   and OpenBLAS's threads busy-wait after every product (for 2²⁸ cycles, ~0.1 s): on 2 cores the
   two pools take turns stealing each other's core — a 0.3 ms layer norm took 16 ms inside a
   training step, and a 2-thread GELU after a product ran at 1-thread speed. numba's ``workqueue``
   layer sleeps instead of spinning, so we pick it unless ``NUMBA_THREADING_LAYER`` says otherwise
   (it must be chosen before the first parallel kernel runs); and ``autograd/tensor.py`` sets
   ``OPENBLAS_THREAD_TIMEOUT=12`` (sleep after 2¹² cycles) unless already set, before the
   engine's first NumPy import — if your program imported NumPy before ``autograd``, set it
   yourself.
3. **One thread on a busy machine.** ``set_num_threads(n)`` sets both pools at once (numba's, and
   OpenBLAS's through its C API, as threadpoolctl does). When the machine is already busy — a
   load average of at least 1.5 × the cores when the engine is imported — every parallel kernel
   and every product waits for threads that the OS has not scheduled yet, and a GPT-mini step took
   250-2000 ms on 2 threads against ~165 ms on one; so the engine then starts on one thread.
   ``MINILM_THREADS=N`` chooses for both pools; ``NUMBA_NUM_THREADS`` or ``OPENBLAS_NUM_THREADS``
   for one of them (minilm sets neither; the test suite's ``conftest.py`` and the autograder's
   children run with ``OPENBLAS_NUM_THREADS=1``).

4. **Small calls on one thread, and only float arrays to numba.** ``numba_entry`` wraps the entry
   function of each numba kernel: a call on fewer than ``PARALLEL_MIN_SIZE`` elements runs on one
   thread, and one whose arrays are empty or not float32/float64 goes to the NumPy reference.

``MINILM_TUNE=0`` in the environment turns 1, 2 and 3 off. Measured by ``minilm bench`` on GPT-mini
(2 cores): 1 took a step from ~205 to ~150 ms, 2 took ~540 ms (the OpenMP layer) to ~215 ms and
then the OpenBLAS timeout another ~7% off.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys

import numba
import numpy as np

from ..errors import ConfigError

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameter numbers
_KEEP = 1 << 30  # blocks up to 1 GiB come from (and return to) the heap; the heap top is not trimmed

_applied = False


def tune() -> None:
    """Apply settings 1 and 2 of the module docstring (once; ``MINILM_TUNE=0`` skips them)."""
    global _applied
    if _applied or os.environ.get("MINILM_TUNE", "1").strip() == "0":
        return
    _applied = True
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None)
            mallopt = libc.mallopt
        except (OSError, AttributeError):  # not glibc (musl has no mallopt)
            mallopt = None
        if mallopt is not None:
            mallopt(_M_MMAP_THRESHOLD, _KEEP)
            mallopt(_M_TRIM_THRESHOLD, _KEEP)
    if not os.environ.get("NUMBA_THREADING_LAYER"):
        numba.config.THREADING_LAYER = "workqueue"
    chosen = os.environ.get("MINILM_THREADS", "").strip()
    if chosen:
        if not chosen.isdigit() or int(chosen) < 1:
            raise ConfigError(f"MINILM_THREADS={chosen!r}: expected a positive integer (threads for numba and BLAS)")
        set_num_threads(min(int(chosen), numba.config.NUMBA_NUM_THREADS))
    elif _busy():  # one thread for each pool whose size nobody chose
        if not os.environ.get("NUMBA_NUM_THREADS"):
            numba.set_num_threads(1)
        if not (os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")):
            for lib in _openblas_libraries():
                _call_first(lib, _BLAS_SETTERS, ctypes.c_int(1))


def _busy() -> bool:
    """Is the machine already busy (1-minute load average ≥ 1.5 × cores)?"""
    try:
        return os.getloadavg()[0] >= 1.5 * (os.cpu_count() or 1)
    except (OSError, AttributeError):  # no load average (Windows)
        return False


# ---- thread counts --------------------------------------------------------------------------------
_BLAS_SETTERS = ("openblas_set_num_threads", "openblas_set_num_threads64_",
                 "scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_")
_BLAS_GETTERS = ("openblas_get_num_threads", "openblas_get_num_threads64_",
                 "scipy_openblas_get_num_threads", "scipy_openblas_get_num_threads64_")


def _openblas_libraries() -> list:
    """The OpenBLAS shared libraries loaded in this process (NumPy's, and any other)."""
    # NumPy (imported at the top) has loaded its BLAS by now
    paths = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:  # not Linux: no /proc
        return []
    libs = []
    for path in paths:
        try:
            libs.append(ctypes.CDLL(path))
        except OSError:
            pass
    return libs


def _call_first(lib, names, *args):
    for name in names:
        fn = getattr(lib, name, None)
        if fn is not None:
            return fn(*args)
    return None


def _openblas_string(names) -> str | None:
    for lib in _openblas_libraries():
        for name in names:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode(errors="replace")
    return None


def blas_config() -> str | None:
    """OpenBLAS's build line (``OpenBLAS 0.3.31 ... DYNAMIC_ARCH ...``), or None."""
    return _openblas_string(("openblas_get_config", "openblas_get_config64_", "scipy_openblas_get_config",
                             "scipy_openblas_get_config64_"))


def blas_corename() -> str | None:
    """The kernels OpenBLAS chose for this CPU (``SkylakeX``, ``Haswell``, ``Zen``, ...), or None."""
    return _openblas_string(("openblas_get_corename", "openblas_get_corename64_", "scipy_openblas_get_corename",
                             "scipy_openblas_get_corename64_"))


def blas_num_threads() -> int | None:
    """OpenBLAS's thread count (None when no OpenBLAS is found)."""
    for lib in _openblas_libraries():
        n = _call_first(lib, _BLAS_GETTERS)
        if n is not None:
            return int(n)
    return None


def set_num_threads(n: int) -> None:
    """Use ``n`` threads in numba's parallel kernels and in OpenBLAS (1 ≤ n ≤ the cores numba saw)."""
    limit = numba.config.NUMBA_NUM_THREADS
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= limit:
        raise ConfigError(f"set_num_threads: n={n!r}, expected an integer in [1, {limit}]")
    numba.set_num_threads(n)
    for lib in _openblas_libraries():
        _call_first(lib, _BLAS_SETTERS, ctypes.c_int(n))


def get_num_threads() -> dict:
    """``{"numba": n, "blas": n or None}``: the threads each pool uses now."""
    return {"numba": numba.get_num_threads(), "blas": blas_num_threads()}


# ---- which calls a numba kernel takes, and on how many threads --------------------------------------
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# Below this many elements a kernel runs on one thread: waking the other threads costs more than
# they save (tens of µs on an idle machine, milliseconds on a busy one).
PARALLEL_MIN_SIZE = 1 << 14


@contextlib.contextmanager
def one_thread():
    saved = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(saved)


def numba_entry(fallback, arrays=(0,)):
    """Decorate the entry function of a numba kernel (``@numba_entry(fallback=softmax_forward_numpy)``).

    The arrays at positions ``arrays`` of a call decide: empty ones, or ones that are not all
    float32 or all float64 (the only dtypes the kernels are compiled for), go to ``fallback``, the
    NumPy reference; a call on fewer than ``PARALLEL_MIN_SIZE`` elements runs on one thread.
    """
    def decorate(kernel):
        @functools.wraps(kernel)
        def entry(*args, **kwargs):
            checked = [args[i] for i in arrays]
            dtype = checked[0].dtype
            if dtype not in _FLOATS or any(a.dtype != dtype or a.size == 0 for a in checked):
                return fallback(*args, **kwargs)
            if max(a.size for a in checked) >= PARALLEL_MIN_SIZE:
                return kernel(*args, **kwargs)
            with one_thread():
                return kernel(*args, **kwargs)
        return entry
    return decorate
