"""Compute kernels behind the engine's heavy operations, each beside its NumPy reference.

``set_backend("numba" | "numpy")`` switches every kernel at once (default ``"numba"``, or the
``MINILM_BACKEND`` environment variable). The fused ``Function`` classes in ``autograd/fused.py``
call the functions below; each dispatches on the backend:

==========================  ================================  =========================  ==========
kernel                      numba                             NumPy reference            task slot
==========================  ================================  =========================  ==========
matmul                      tiled parallel (Task 2.3)         ``np.matmul`` (BLAS)       2.3 numba
softmax, log_softmax        row kernels (softmax.py)          slot                       2.1 NumPy
scaled_masked_softmax       row kernel (attention.py)         attention.py               2.4 numba
cross_entropy (lsm + NLL)   row kernels (cross_entropy.py)    slot                       2.2 NumPy
layer_norm                  row kernels (layer_norm.py)       slot                       2.5 NumPy
gelu (tanh / exact)         elementwise (gelu.py)             slot                       2.5 NumPy
embedding backward          column-block scatter-add          ``np.add.at``              —
==========================  ================================  =========================  ==========

**The numba backend runs the faster of the two, per kernel.** Fusing saves passes over memory, but
a numba loop that calls ``math.exp`` or ``math.tanh`` runs one number at a time, while NumPy's
ufuncs are SIMD; so the float32 kernels compute ``exp`` with ``fastmath.exp_approx`` (arithmetic
only, which LLVM vectorises) and sum rows with ``fastmath.row_sum`` (a reduction LLVM may
reorder). Measured by ``minilm bench`` on 2 cores (float32, GPT-mini shapes, forward and backward
apart), numba now wins for every kernel but two: the attention softmax (2.5×), layer norm (2×),
softmax and log-softmax (1.2× forward, 1.2–2.7× backward), cross-entropy (1.6× / 2.2×), the
tanh-GELU backward (2.5×), exact GELU (8–12×: NumPy has no erf) and the embedding scatter-add
(6–10× ``np.add.at``). ``NUMPY_IS_FASTER`` lists the two exceptions, which the numba backend hands
to NumPy: matmul (OpenBLAS's packed, register-blocked kernels beat any numba loop we wrote — the
blocked kernel in ``matmul.py`` reaches about half of BLAS, Task 2.3's loop a fifth) and the
tanh-GELU forward (on one thread NumPy's SIMD ``tanh`` wins; on two the kernel is ~1.3× faster).

``set_backend("numba", everywhere=True)`` runs every kernel on numba, and the two task-slot kernels
(Task 2.3's matmul, Task 2.4's attention softmax) in place of BLAS and the engine's own attention
kernel: the tests use it, and it runs the kit on your own kernels. Saved state is plain arrays
with the same meaning on both sides (probabilities, mean and rstd, ...), so a forward and its
backward may run on different implementations.

Numba compiles each kernel on first use per dtype and caches the machine code on disk
(``cache=True``): the first run takes a few seconds more. ``NUMBA_DISABLE_JIT=1`` runs the kernels
as plain Python (for prints and pdb): correct, slow. Only float32 and float64 arrays go to numba.
"""
from __future__ import annotations

import contextlib
import os
import sys

import numba
import numpy as np

from .. import tasks
from ..errors import ConfigError, MiniLMError
from . import attention as _attention
from . import cross_entropy as _ce
from . import embedding as _embedding
from . import gelu as _gelu
from . import layer_norm as _ln
from . import runtime
from . import softmax as _softmax
from .gelu import erf
from .matmul import matmul_blocked
from .runtime import get_num_threads, set_num_threads

runtime.tune()  # keep freed memory, a sleeping numba thread pool (runtime.py says why)

__all__ = ["BACKENDS", "NUMPY_IS_FASTER", "set_backend", "get_backend", "use_backend", "implementation",
           "matmul", "matmul_numba", "matmul_blocked", "softmax_forward", "softmax_backward", "log_softmax_forward",
           "log_softmax_backward", "scaled_masked_softmax_forward", "scaled_masked_softmax_backward",
           "cross_entropy_forward", "cross_entropy_backward", "layer_norm_forward", "layer_norm_backward",
           "gelu_forward", "gelu_backward", "embedding_backward", "erf", "set_num_threads",
           "get_num_threads"]

BACKENDS = ("numba", "numpy")
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# Kernels that the numba backend leaves to NumPy because NumPy measured faster (module docstring).
NUMPY_IS_FASTER = frozenset({"matmul", "gelu_tanh_forward"})

# Task 2.3: solutions/task02_kernels/matmul.py — the tiled numba matmul
matmul_numba = tasks.bind("task02_kernels.matmul", "matmul_numba")


def _check_backend(name):
    if name not in BACKENDS:
        raise MiniLMError(f"set_backend: unknown backend {name!r}; expected one of {BACKENDS}")
    return name


_backend = _check_backend(os.environ.get("MINILM_BACKEND", "").strip() or "numba")
_everywhere = False


def set_backend(name: str, *, everywhere: bool = False) -> None:
    """Choose the implementation of every kernel: ``"numba"`` or ``"numpy"``.

    On ``"numba"``, the kernels in ``NUMPY_IS_FASTER`` still run on NumPy (the faster, module
    docstring) unless ``everywhere=True``. ``"numpy"`` runs everything on NumPy.
    """
    global _backend, _everywhere
    _backend, _everywhere = _check_backend(name), bool(everywhere)


def get_backend() -> str:
    return _backend


@contextlib.contextmanager
def use_backend(name: str, *, everywhere: bool = False):
    """``with use_backend("numpy"):`` runs a block on one backend and restores the previous one."""
    saved = _backend, _everywhere
    set_backend(name, everywhere=everywhere)
    try:
        yield
    finally:
        set_backend(saved[0], everywhere=saved[1])


def implementation(kernel: str) -> str:
    """``"numba"`` or ``"numpy"``: who runs ``kernel`` (e.g. ``"softmax_forward"``) on float data now."""
    if _backend == "numpy" or (kernel in NUMPY_IS_FASTER and not _everywhere):
        return "numpy"
    return "numba"


def _on_numba(*arrays) -> bool:
    """True when the numba kernels take this call: numba backend, non-empty float32/64 arrays."""
    return _backend == "numba" and all(a.dtype in _FLOATS and a.size > 0 for a in arrays)


# Below this many elements a kernel runs on one thread: waking the other threads costs more than
# they save (tens of µs on an idle machine, milliseconds on a busy one).
PARALLEL_MIN_SIZE = 1 << 14


@contextlib.contextmanager
def _one_thread():
    saved = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(saved)


def _run(module, name, arrays, *args, kernel=None, numba_name=None):
    """Call ``module.<name>_numba`` or ``module.<name>_numpy`` with ``args``: the numba one when the
    backend picks numba for ``kernel`` (default ``name``) and ``arrays`` are non-empty float32/64.
    ``numba_name`` replaces ``<name>_numba`` (a task slot's kernel under ``everywhere=True``)."""
    if implementation(kernel or name) == "numpy" or not _on_numba(*arrays):
        return getattr(module, name + "_numpy")(*args)
    numba_impl = getattr(module, numba_name or name + "_numba")
    if max(a.size for a in arrays) >= PARALLEL_MIN_SIZE:
        return numba_impl(*args)
    with _one_thread():
        return numba_impl(*args)


# ---- matmul (Task 2.3) ------------------------------------------------------------------------------
matmul_numpy = np.matmul


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched ``a @ b`` (batch dimensions broadcast)."""
    if a.dtype != b.dtype:
        return np.matmul(a, b)
    if b.ndim > 2 and b.shape[-1] > 1 and b.strides[-2] == b.itemsize:
        # a stack of transposed matrices (attention's k.T): OpenBLAS's small-matrix path is ~35%
        # slower on them than the copy to row-major costs
        b = np.ascontiguousarray(b)
    return _run(sys.modules[__name__], "matmul", (a, b), a, b)


# ---- softmax and log-softmax along any axis (Task 2.1) -------------------------------------------
def softmax_forward(x, axis=-1):
    return _run(_softmax, "softmax_forward", (x,), x, axis)


def softmax_backward(grad_output, out, axis=-1):
    return _run(_softmax, "softmax_backward", (out,), grad_output, out, axis)


def log_softmax_forward(x, axis=-1):
    return _run(_softmax, "log_softmax_forward", (x,), x, axis)


def log_softmax_backward(grad_output, out, axis=-1):
    return _run(_softmax, "log_softmax_backward", (out,), grad_output, out, axis)


# ---- attention: fused scale + mask + softmax (Task 2.4) ------------------------------------------
def _attention_kernel(name):
    """The engine's numba kernel by default; Task 2.4's under ``everywhere=True`` (attention.py)."""
    return name + ("_task" if _everywhere else "_numba")


def scaled_masked_softmax_forward(scores, mask, scale):
    """P = softmax over allowed keys of scale·scores; mask True = may attend; empty rows → 0."""
    name = "scaled_masked_softmax_forward"
    return _run(_attention, name, (scores,), scores, mask, scale, numba_name=_attention_kernel(name))


def scaled_masked_softmax_backward(grad_output, out, scale):
    name = "scaled_masked_softmax_backward"
    return _run(_attention, name, (out,), grad_output, out, scale, numba_name=_attention_kernel(name))


# ---- softmax cross-entropy with ignore_index and label smoothing (Task 2.2) ----------------------
def cross_entropy_forward(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """logits (N, V), target (N,) → (loss, probs); loss reduced as ``reduction`` says."""
    return _run(_ce, "cross_entropy_forward", (logits,), logits, target, ignore_index, label_smoothing,
                reduction)


def cross_entropy_backward(grad_output, probs, target, ignore_index=-100, label_smoothing=0.0,
                           reduction="mean"):
    return _run(_ce, "cross_entropy_backward", (probs,), grad_output, probs, target, ignore_index,
                label_smoothing, reduction)


# ---- layer norm over the last axis (Task 2.5) ----------------------------------------------------
def layer_norm_forward(x, weight, bias, eps=1e-5):
    """x (..., C), weight and bias (C,) → (out, mean, rstd); mean, rstd (..., 1)."""
    return _run(_ln, "layer_norm_forward", (x, weight, bias), x, weight, bias, eps)


def layer_norm_backward(grad_output, x, weight, mean, rstd):
    """→ (dx, dweight, dbias)."""
    return _run(_ln, "layer_norm_backward", (x, weight), grad_output, x, weight, mean, rstd)


# ---- GELU (Task 2.5) -----------------------------------------------------------------------------
def _check_gelu(approximate):
    if approximate not in ("tanh", "none"):
        raise ConfigError(f"gelu: approximate={approximate!r}, expected 'tanh' or 'none'")


def gelu_forward(x, approximate="tanh"):
    """``approximate="tanh"`` (GPT-2, BERT's TF code) or ``"none"`` (exact x·Φ(x))."""
    _check_gelu(approximate)
    return _run(_gelu, "gelu_forward", (x,), x, approximate, kernel=f"gelu_{approximate}_forward")


def gelu_backward(grad_output, x, approximate="tanh"):
    _check_gelu(approximate)
    return _run(_gelu, "gelu_backward", (x,), grad_output, x, approximate, kernel=f"gelu_{approximate}_backward")


# ---- embedding backward: scatter-add ---------------------------------------------------------------
def embedding_backward(grad, ids, num_embeddings):
    """grad (N, C), ids (N,) → dweight (num_embeddings, C) with dweight[v] = Σ_{ids[n]=v} grad[n]."""
    return _run(_embedding, "embedding_backward", (grad,), grad, ids, num_embeddings)
