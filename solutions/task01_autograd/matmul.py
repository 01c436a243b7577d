"""Task 1.4: the backward of batched matrix multiplication.

For 2-D ``out = a @ b`` with a (M, K), b (K, N), out (M, N):

    dL/da = dL/dout @ bᵀ      (M, N) @ (N, K) → (M, K)
    dL/db = aᵀ @ dL/dout      (K, M) @ (M, N) → (K, N)

Batched inputs have leading *batch* dimensions that broadcast like NumPy: a (B, M, K) @ b (K, N)
uses the same ``b`` for every batch entry, so ``b``'s gradient is the **sum** over the batch.
Transpose only the last two axes (``swapaxes(-1, -2)``), then reduce each gradient to its input's
shape with ``unbroadcast`` (imported from the library, Task 1.2's function).
"""
from autograd.elementwise import unbroadcast


def matmul_backward(grad_output, a, b):
    """Task 1.4: out = a @ b with a (..., M, K), b (..., K, N), out (..., M, N), batch dims
    broadcast. Return (dL/da, dL/db) with exactly a's and b's shapes."""
    # BEGIN SOLUTION
    grad_a = grad_output @ b.swapaxes(-1, -2)  # (..., M, N) @ (..., N, K) → (..., M, K)
    grad_b = a.swapaxes(-1, -2) @ grad_output  # (..., K, M) @ (..., M, N) → (..., K, N)
    return unbroadcast(grad_a, a.shape), unbroadcast(grad_b, b.shape)
    # END SOLUTION
