"""``exp`` that a numba loop can vectorise, for the float32 kernels.

A numba loop that calls ``math.exp`` or ``math.tanh`` runs one number at a time: LLVM turns the
call into a call to the C library, which has no vector version unless Intel's SVML is installed.
NumPy's ufuncs have hand-written SIMD versions, so a fused numba kernel that saves passes over
memory still lost to NumPy's ``np.exp`` (and ``np.tanh``). The cure is an ``exp`` made only of
multiplications and additions, which LLVM vectorises like any other loop body:

    eᶻ = (e^(z/128))¹²⁸        z clamped to [−87, 87], so |z/128| ≤ 0.68
    e^x ≈ Σₖ₌₀¹² xᵏ/k!          Taylor to x¹² (Horner), then square seven times

The Taylor remainder at |x| = 0.68 is below 0.68¹³/13! ≈ 10⁻¹²; seven squarings multiply a
relative error by 2⁷ = 128, so the result is within ~10⁻¹⁰ of eᶻ in float64 arithmetic — far
inside one float32 rounding (6·10⁻⁸). Below −87, eᶻ is smaller than any normal float32 and comes
out as e⁻⁸⁷ ≈ 1.6·10⁻³⁸ instead of 0; above 87 float32 would overflow anyway. The float64
kernels keep ``math.exp``: this approximation is for float32 results only.

``½(1 + tanh u) = σ(2u) = 1 / (1 + e^(−2u))`` is how the GELU kernel uses it.
"""
import math

import numba

_INV_2_7 = 1.0 / 128.0
_C = tuple(1.0 / math.factorial(k) for k in range(13))  # 1/k!, k = 0 … 12
_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12 = _C[2:]


@numba.njit(inline="always", cache=True)
def exp_approx(z):
    """eᶻ to float32 precision (relative error ~10⁻¹⁰ on [−87, 87]); float64 out; NaN stays NaN."""
    x = float(z)  # float64 arithmetic (float32 in, too: the squarings amplify rounding 128-fold)
    if not x > -87.0:  # also catches NaN (every comparison with NaN is False) ...
        x = -87.0
    if x > 87.0:
        x = 87.0
    x *= _INV_2_7
    p = 1.0 + x * (1.0 + x * (_C2 + x * (_C3 + x * (_C4 + x * (_C5 + x * (_C6 + x * (
        _C7 + x * (_C8 + x * (_C9 + x * (_C10 + x * (_C11 + x * _C12)))))))))))
    p *= p
    p *= p
    p *= p
    p *= p
    p *= p
    p *= p
    p *= p  # p^128
    return p if z == z else z  # ... and NaN in gives NaN out


# ---- row reductions that vectorise ----------------------------------------------------------------
# A loop ``total += a[j]`` is a chain of dependent additions: LLVM may not reorder floating-point
# sums (the result would change in the last bits), so it cannot spread them over SIMD lanes. These
# helpers allow exactly that reordering (``fastmath={"reassoc"}``) for one sum each; the order is
# fixed by the compiled code, so the same machine gives the same result every run, whatever the
# thread count. They are not inlined at the numba level on purpose: the permission stays on these
# few instructions and never reaches the caller's arithmetic (e.g. exp_approx's range reduction).
@numba.njit(fastmath={"nnan", "nsz"}, cache=True)
def row_max(a, r):
    """maxⱼ a[r, j] (a row of at least one entry). ``nnan`` lets LLVM vectorise the comparison; a
    NaN in the row may then be skipped here, but it still makes that row's e^(x − m) NaN."""
    m = a[r, 0]
    for j in range(1, a.shape[1]):
        m = max(m, a[r, j])
    return m


@numba.njit(fastmath={"reassoc", "nsz"}, cache=True)
def row_sum(a, r):
    """Σⱼ a[r, j], accumulated in float64."""
    total = 0.0
    for j in range(a.shape[1]):
        total += a[r, j]
    return total


@numba.njit(fastmath={"reassoc", "nsz"}, cache=True)
def row_dot(a, b, r):
    """Σⱼ a[r, j]·b[r, j], accumulated in float64."""
    total = 0.0
    for j in range(a.shape[1]):
        total += a[r, j] * b[r, j]
    return total


@numba.njit(fastmath={"reassoc", "nsz"}, cache=True)
def row_sum_sq_dev(a, r, mu):
    """Σⱼ (a[r, j] − μ)², accumulated in float64."""
    total = 0.0
    for j in range(a.shape[1]):
        d = a[r, j] - mu
        total += d * d
    return total


@numba.njit(fastmath={"reassoc", "nsz"}, cache=True)
def layer_norm_row_sums(grad_out, x, weight, r, mu, rs):
    """(Σⱼ gⱼγⱼ, Σⱼ gⱼγⱼx̂ⱼ) for row r of layer norm's backward, x̂ = (x − μ)·r."""
    s_g, s_gx = 0.0, 0.0
    for j in range(x.shape[1]):
        gw = grad_out[r, j] * weight[j]
        s_g += gw
        s_gx += gw * ((x[r, j] - mu) * rs)
    return s_g, s_gx
