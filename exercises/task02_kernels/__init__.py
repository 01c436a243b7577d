"""Task module 2: kernels and numerics (stable softmax, cross-entropy, numba matmul, fused softmax, layer norm and GELU)."""
