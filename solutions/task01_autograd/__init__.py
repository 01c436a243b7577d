"""Task module 1: the autograd engine (topological sort, elementwise, reductions, matmul backward, gradcheck)."""
