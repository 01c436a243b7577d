"""Kernel microbenchmarks: each numba kernel against its NumPy twin, at the GPT-mini shapes.

* matmul: the blocked numba kernel (``kernels/matmul.py``) and Task 2.3's tiled loop against
  NumPy's BLAS, in GFLOP/s, at 256³, 512³, 1024³ and one attention-shaped batch (B·H matrices);
* fused scale + mask + softmax, layer norm, GELU, softmax + cross-entropy: forward + backward of
  the numba kernel against the composed NumPy version (the task slots' references);
* embedding backward: the numba scatter-add against ``np.add.at``.

Both sides run through ``autograd.kernels`` (``use_backend("numba", student_kernels=True)`` against
``use_backend("numpy")``), so this measures exactly what the engine calls; the two are timed in
turn (a, b, a, b, ...). ``implementation`` says which one the default backend picks.
"""
from __future__ import annotations

import numpy as np

from autograd import kernels
from autograd.kernels.matmul import matmul_blocked

from .timing import interleaved_ms

MATMUL_SIZES = (256, 512, 1024)
ATTENTION_BATCH = (128, 64, 32, 64)  # B·H = 32·4 matrices of (T × d) @ (d × T)


def _repeats(flops: float, budget_flops: float = 4e9) -> int:
    return int(min(30, max(3, budget_flops // max(flops, 1.0))))


def matmul(sizes=MATMUL_SIZES, attention=ATTENTION_BATCH, *, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    cases = [((n, n), (n, n)) for n in sizes]
    if attention:
        b, m, k, n = attention
        cases.append(((b, m, k), (b, k, n)))
    rows = []
    for a_shape, w_shape in cases:
        a = rng.standard_normal(a_shape).astype(np.float32)
        w = rng.standard_normal(w_shape).astype(np.float32)
        batch = a_shape[0] if len(a_shape) == 3 else 1
        flops = 2.0 * batch * a_shape[-2] * a_shape[-1] * w_shape[-1]
        t = interleaved_ms({"blas": lambda: np.matmul(a, w), "numba": lambda: matmul_blocked(a, w),
                            "task23": lambda: kernels.matmul_numba(a, w)}, repeats=_repeats(flops))
        gflops = {k: flops / (v["median_ms"] * 1e6) for k, v in t.items()}
        label = "x".join(map(str, (a_shape[-2], a_shape[-1], w_shape[-1])))
        rows.append({"shape": label if batch == 1 else f"{batch} x {label}",
                     "blas_gflops": gflops["blas"], "numba_gflops": gflops["numba"],
                     "task23_gflops": gflops["task23"], "numba_vs_blas": gflops["numba"] / gflops["blas"],
                     "task23_vs_blas": gflops["task23"] / gflops["blas"]})
    return rows


def _pair(run, kernel: str, repeats: int, *, task_kernel: bool = False) -> dict:
    """Time ``run()`` on the numba kernels and on NumPy: ms of each, the speed-up, and who runs
    ``kernel`` by default. ``task_kernel``: the op also has a task slot's numba kernel (Task 2.4),
    which ``student_kernels=True`` selects: time it too, and take the engine's from the default."""
    def on(backend, **kw):
        def call():
            with kernels.use_backend(backend, **kw):
                run()
        return call
    fns = {"numba": on("numba", student_kernels=not task_kernel), "numpy": on("numpy")}
    if task_kernel:
        fns["task"] = on("numba", student_kernels=True)
    t = interleaved_ms(fns, repeats=repeats)
    with kernels.use_backend("numba"):
        default = kernels.implementation(kernel)
    result = {"numba_ms": t["numba"]["median_ms"], "numpy_ms": t["numpy"]["median_ms"],
              "speedup": t["numpy"]["median_ms"] / t["numba"]["median_ms"], "default": default}
    if task_kernel:
        result["task_ms"] = t["task"]["median_ms"]
    return result


def fused_ops(B=32, H=4, T=64, C=128, V=256, *, repeats: int = 20, seed: int = 0) -> dict:
    """Forward + backward of each fused op at GPT-mini's shapes (N = B·T rows)."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    N = B * T
    scores = rng.standard_normal((B, H, T, T)).astype(f32)
    g_scores = rng.standard_normal((B, H, T, T)).astype(f32)
    causal = np.tril(np.ones((T, T), dtype=bool))
    scale = 1.0 / np.sqrt(C // H)
    x = rng.standard_normal((N, C)).astype(f32)
    gx = rng.standard_normal((N, C)).astype(f32)
    w, b = np.ones(C, f32), np.zeros(C, f32)
    h = rng.standard_normal((N, 4 * C)).astype(f32)
    gh = rng.standard_normal((N, 4 * C)).astype(f32)
    logits = rng.standard_normal((N, V)).astype(f32)
    target = rng.integers(0, V, size=N)
    ids = rng.integers(0, V, size=N)

    def attention():
        p = kernels.scaled_masked_softmax_forward(scores, causal, scale)
        kernels.scaled_masked_softmax_backward(g_scores, p, scale)

    def layer_norm():
        _, mean, rstd = kernels.layer_norm_forward(x, w, b)
        kernels.layer_norm_backward(gx, x, w, mean, rstd)

    def gelu():
        kernels.gelu_forward(h, "tanh")
        kernels.gelu_backward(gh, h, "tanh")

    def cross_entropy():
        _, probs = kernels.cross_entropy_forward(logits, target)
        kernels.cross_entropy_backward(np.asarray(1.0, f32), probs, target)

    def softmax():
        p = kernels.softmax_forward(logits)
        kernels.softmax_backward(logits, p)

    def embedding():
        kernels.embedding_backward(gx, ids, V)

    return {
        "scaled_masked_softmax": {"shape": f"({B}, {H}, {T}, {T}), causal",
                                  **_pair(attention, "scaled_masked_softmax_forward", repeats, task_kernel=True)},
        "layer_norm": {"shape": f"({N}, {C})", **_pair(layer_norm, "layer_norm_forward", repeats)},
        "gelu": {"shape": f"({N}, {4 * C}), tanh", **_pair(gelu, "gelu_tanh_backward", repeats)},
        "softmax_cross_entropy": {"shape": f"({N}, {V})", **_pair(cross_entropy, "cross_entropy_forward", repeats)},
        "softmax": {"shape": f"({N}, {V})", **_pair(softmax, "softmax_forward", repeats)},
        "embedding_backward": {"shape": f"{N} ids into ({V}, {C})", **_pair(embedding, "embedding_backward", repeats)},
    }
