"""Compute kernels behind the engine's heavy operations, each beside its NumPy reference.

``set_backend("numba" | "numpy")`` switches every kernel at once (default ``"numba"``, or the
``MINILM_BACKEND`` environment variable). The fused ``Function`` classes in ``autograd/fused.py``
call ``kernels.active.<kernel>(...)``: ``active`` is one of the three ``KernelTable``s below
(``NUMBA_KERNELS``, ``STUDENT_KERNELS``, ``NUMPY_KERNELS``), which ``set_backend`` picks, and each
field is the function that does the work:

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
(6–10× ``np.add.at``). ``NUMPY_ON_NUMBA_BACKEND`` lists the two exceptions, which
``NUMBA_KERNELS`` hands to NumPy: matmul (OpenBLAS's packed, register-blocked kernels beat any numba
loop we wrote — the blocked kernel in ``matmul.py`` reaches about half of BLAS, Task 2.3's loop a
fifth) and the tanh-GELU forward (on one thread NumPy's SIMD ``tanh`` wins; on two the kernel is
~1.3× faster).

``set_backend("numba", student_kernels=True)`` (``STUDENT_KERNELS``) runs every kernel on numba,
and the two task-slot kernels (Task 2.3's matmul, Task 2.4's attention softmax: the student's,
under ``--impl exercises``) in place of BLAS and the engine's own attention kernel: the tests use
it, and it runs the kit on your own kernels. Saved state is plain arrays with the same meaning on
both sides (probabilities, mean and rstd, ...), so a forward and its backward may run on different
implementations.

Numba compiles each kernel on first use per dtype and caches the machine code on disk
(``cache=True``): the first run takes a few seconds more. ``NUMBA_DISABLE_JIT=1`` runs the kernels
as plain Python (for prints and pdb): correct, slow. Only non-empty float32 and float64 arrays go
to numba; ``runtime.numba_entry`` hands anything else to the NumPy reference.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Callable

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
from .runtime import get_num_threads, numba_entry, set_num_threads

runtime.tune()  # keep freed memory, a sleeping numba thread pool (runtime.py says why)

__all__ = ["BACKENDS", "NUMPY_ON_NUMBA_BACKEND", "KernelTable", "NUMBA_KERNELS", "STUDENT_KERNELS",
           "NUMPY_KERNELS", "set_backend", "get_backend", "use_backend", "implementation", "matmul",
           "matmul_numba", "matmul_blocked", "softmax_forward", "softmax_backward", "log_softmax_forward",
           "log_softmax_backward", "scaled_masked_softmax_forward", "scaled_masked_softmax_backward",
           "cross_entropy_forward", "cross_entropy_backward", "layer_norm_forward", "layer_norm_backward",
           "gelu_forward", "gelu_backward", "embedding_backward", "erf", "set_num_threads",
           "get_num_threads"]

BACKENDS = ("numba", "numpy")

# Kernels that the numba backend runs on NumPy, because NumPy measured faster (module docstring);
# ``student_kernels=True`` runs them on numba too. NUMBA_KERNELS below is written to agree.
NUMPY_ON_NUMBA_BACKEND = frozenset({"matmul", "gelu_tanh_forward"})

# Task 2.3: solutions/task02_kernels/matmul.py — the student's tiled numba matmul
matmul_numba = tasks.bind("task02_kernels.matmul", "matmul_numba")


def matmul_blas(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched ``a @ b`` (batch dimensions broadcast) on NumPy's BLAS."""
    if a.dtype == b.dtype and b.ndim > 2 and b.shape[-1] > 1 and b.strides[-2] == b.itemsize:
        # a stack of transposed matrices (attention's k.T): OpenBLAS's small-matrix path is ~35%
        # slower on them than the copy to row-major costs
        b = np.ascontiguousarray(b)
    return np.matmul(a, b)


@dataclasses.dataclass
class KernelTable:
    """One backend's function for each kernel. Shapes and saved state: the kernel modules."""
    matmul: Callable                          # (a, b) → a @ b
    softmax_forward: Callable                 # (x, axis) → p
    softmax_backward: Callable                # (grad_output, p, axis) → dx
    log_softmax_forward: Callable             # (x, axis) → log p
    log_softmax_backward: Callable            # (grad_output, log p, axis) → dx
    scaled_masked_softmax_forward: Callable   # (scores, mask, scale) → P
    scaled_masked_softmax_backward: Callable  # (grad_output, P, scale) → dscores
    cross_entropy_forward: Callable           # (logits, target, ignore_index, smoothing, reduction) → (loss, probs)
    cross_entropy_backward: Callable          # (grad_output, probs, target, ...) → dlogits
    layer_norm_forward: Callable              # (x, weight, bias, eps) → (out, mean, rstd)
    layer_norm_backward: Callable             # (grad_output, x, weight, mean, rstd) → (dx, dweight, dbias)
    gelu_forward: Callable                    # (x, approximate) → gelu(x)
    gelu_backward: Callable                   # (grad_output, x, approximate) → dx
    embedding_backward: Callable              # (grad (N, C), ids (N,), V) → dweight (V, C)


NUMPY_KERNELS = KernelTable(  # the references: mostly the Task 2.x slots
    matmul=matmul_blas,
    softmax_forward=_softmax.softmax_forward_numpy,
    softmax_backward=_softmax.softmax_backward_numpy,
    log_softmax_forward=_softmax.log_softmax_forward_numpy,
    log_softmax_backward=_softmax.log_softmax_backward_numpy,
    scaled_masked_softmax_forward=_attention.scaled_masked_softmax_forward_numpy,
    scaled_masked_softmax_backward=_attention.scaled_masked_softmax_backward_numpy,
    cross_entropy_forward=_ce.cross_entropy_forward_numpy,
    cross_entropy_backward=_ce.cross_entropy_backward_numpy,
    layer_norm_forward=_ln.layer_norm_forward_numpy,
    layer_norm_backward=_ln.layer_norm_backward_numpy,
    gelu_forward=_gelu.gelu_forward_numpy,
    gelu_backward=_gelu.gelu_backward_numpy,
    embedding_backward=_embedding.embedding_backward_numpy,
)

NUMBA_KERNELS = KernelTable(  # the default: the faster of the two per kernel (module docstring)
    matmul=matmul_blas,                              # BLAS beats every numba loop we wrote
    softmax_forward=_softmax.softmax_forward_numba,
    softmax_backward=_softmax.softmax_backward_numba,
    log_softmax_forward=_softmax.log_softmax_forward_numba,
    log_softmax_backward=_softmax.log_softmax_backward_numba,
    scaled_masked_softmax_forward=_attention.scaled_masked_softmax_forward_numba,
    scaled_masked_softmax_backward=_attention.scaled_masked_softmax_backward_numba,
    cross_entropy_forward=_ce.cross_entropy_forward_numba,
    cross_entropy_backward=_ce.cross_entropy_backward_numba,
    layer_norm_forward=_ln.layer_norm_forward_numba,
    layer_norm_backward=_ln.layer_norm_backward_numba,
    gelu_forward=_gelu.gelu_forward_tanh_on_numpy,   # NumPy's SIMD tanh wins for the tanh form
    gelu_backward=_gelu.gelu_backward_numba,
    embedding_backward=_embedding.embedding_backward_numba,
)

STUDENT_KERNELS = dataclasses.replace(  # every kernel on numba, the Task 2.3 and 2.4 ones the student's
    NUMBA_KERNELS,
    matmul=numba_entry(fallback=matmul_blas, arrays=(0, 1))(matmul_numba),
    scaled_masked_softmax_forward=numba_entry(fallback=_attention.scaled_masked_softmax_forward_numpy)(
        _attention.scaled_masked_softmax_forward_task),
    scaled_masked_softmax_backward=numba_entry(fallback=_attention.scaled_masked_softmax_backward_numpy,
                                               arrays=(1,))(_attention.scaled_masked_softmax_backward_task),
    gelu_forward=_gelu.gelu_forward_numba,
)


def _check_backend(name):
    if name not in BACKENDS:
        raise MiniLMError(f"set_backend: unknown backend {name!r}; expected one of {BACKENDS}")
    return name


_backend = _check_backend(os.environ.get("MINILM_BACKEND", "").strip() or "numba")
_student_kernels = False
active: KernelTable = NUMBA_KERNELS if _backend == "numba" else NUMPY_KERNELS  # what the fused ops call


def set_backend(name: str, *, student_kernels: bool = False) -> None:
    """Choose the implementation of every kernel: ``"numba"`` or ``"numpy"``.

    On ``"numba"``, the kernels in ``NUMPY_ON_NUMBA_BACKEND`` still run on NumPy (the faster, module
    docstring); ``student_kernels=True`` runs them on numba too, with Task 2.3's matmul and Task 2.4's
    attention softmax in place of BLAS and the engine's kernel. ``"numpy"`` runs everything on NumPy.
    """
    global _backend, _student_kernels, active
    _backend, _student_kernels = _check_backend(name), bool(student_kernels)
    if _backend == "numpy":
        active = NUMPY_KERNELS
    else:
        active = STUDENT_KERNELS if _student_kernels else NUMBA_KERNELS


def get_backend() -> str:
    return _backend


@contextlib.contextmanager
def use_backend(name: str, *, student_kernels: bool = False):
    """``with use_backend("numpy"):`` runs a block on one backend and restores the previous one."""
    saved = _backend, _student_kernels
    set_backend(name, student_kernels=student_kernels)
    try:
        yield
    finally:
        set_backend(saved[0], student_kernels=saved[1])


def implementation(kernel: str) -> str:
    """``"numba"`` or ``"numpy"``: who runs ``kernel`` (e.g. ``"softmax_forward"``, ``"gelu_tanh_forward"``)
    on non-empty float data now."""
    if _backend == "numpy" or (kernel in NUMPY_ON_NUMBA_BACKEND and not _student_kernels):
        return "numpy"
    return "numba"


# ---- the same kernels as module functions, on the active table (for tests and benchmarks) ---------
def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched ``a @ b`` on the active backend. (Defined here, as the name of the submodule
    ``kernels/matmul.py`` would otherwise hide the table's field.)"""
    return active.matmul(a, b)


def _check_gelu(approximate):
    if approximate not in ("tanh", "none"):
        raise ConfigError(f"gelu: approximate={approximate!r}, expected 'tanh' or 'none'")


def gelu_forward(x, approximate="tanh"):
    """``approximate="tanh"`` (GPT-2, BERT's TF code) or ``"none"`` (exact x·Φ(x))."""
    _check_gelu(approximate)
    return active.gelu_forward(x, approximate)


def gelu_backward(grad_output, x, approximate="tanh"):
    _check_gelu(approximate)
    return active.gelu_backward(grad_output, x, approximate)


_TABLE_FIELDS = frozenset(f.name for f in dataclasses.fields(KernelTable))


def __getattr__(name):
    """``kernels.softmax_forward(...)`` and the table's other fields: the active backend's function."""
    if name in _TABLE_FIELDS:
        return getattr(active, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
