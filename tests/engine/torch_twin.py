"""Random expression graphs built twice, in the engine and in PyTorch, for test_vs_torch.py.

A :class:`Graph` (torch_twin_graph.py) holds a pool of nodes, each the same value computed both ways
plus the line of code that made it, so a failing example prints a readable program. Every op in
``OPS`` picks its operands from the pool (a node may be used many times: gradients must accumulate),
draws its options from ``g.rng`` and adds one node. The ops, by kind:

* torch_twin_elementwise.py — unary functions, softmax, broadcasting binaries, ``where``, ``masked_fill``;
* torch_twin_movement.py — reductions, reshape, permute, indexing, gather, cat / stack;
* torch_twin_layers.py — matmul, linear, layer norm, embedding;
* torch_twin_losses.py — the losses (the only place where the class axis differs by design).

docs/engine.md lists every difference. Imported by test_vs_torch.py only after
``pytest.importorskip("torch")``.
"""
from __future__ import annotations

from .torch_twin_elementwise import op_binary, op_masked_fill, op_softmax, op_unary, op_where
from .torch_twin_graph import TORCH_DTYPE, Graph
from .torch_twin_layers import op_embedding, op_layer_norm, op_linear, op_matmul
from .torch_twin_losses import op_bce, op_cross_entropy, op_kl_mse_cos
from .torch_twin_movement import op_cat, op_gather, op_index, op_permute, op_reduce, op_reshape

__all__ = ["Graph", "OPS", "TORCH_DTYPE"]   # what test_vs_torch.py uses (``tw.Graph``, ...)

OPS = {
    "unary": op_unary, "softmax": op_softmax, "binary": op_binary, "where": op_where,
    "masked_fill": op_masked_fill, "reduce": op_reduce, "reshape": op_reshape, "permute": op_permute,
    "index": op_index, "gather": op_gather, "cat": op_cat, "matmul": op_matmul, "linear": op_linear,
    "layer_norm": op_layer_norm, "embedding": op_embedding, "cross_entropy": op_cross_entropy,
    "bce": op_bce, "kl_mse_cos": op_kl_mse_cos,
}
