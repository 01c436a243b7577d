"""Task 1.1: reverse-mode differentiation over the graph — topological sort, then backward.

Every non-leaf tensor ``t`` has ``t._ctx``, a Node with ``t._ctx.parents`` (its input tensors) and
``t._ctx.backward(grad_output)`` (one gradient per parent, ``None`` where a parent needs none).
Leaves have ``t._ctx is None``. Only tensors with ``requires_grad`` take part.

Backward of a scalar loss L:

1. **Topological sort**: list the tensors that L depends on so that every tensor comes *after* all
   of its parents. Do it without recursion (an explicit stack): a chain of 20,000 operations must
   not hit Python's recursion limit.
2. Walk that list **in reverse** (L first). Each tensor's gradient dL/dt is complete only once every
   tensor that used ``t`` has been visited — which is what the order guarantees.
3. **Accumulate**: a tensor used twice receives the *sum* of its gradients (``x * x`` → 2x).
   Keep gradients of intermediate tensors in a dict keyed by ``id(tensor)``; add each leaf's total
   to ``leaf.grad`` (which may already hold a gradient from an earlier backward call: add to it).
"""


def topological_sort(root):
    """Task 1.1: return the tensors ``root`` depends on (``root`` included, only those with
    ``requires_grad``), each after all of its parents. Iterative: no recursion."""
    raise NotImplementedError("Task 1.1: topological_sort")


def backward(root, grad_output):
    """Task 1.1: given dL/droot = ``grad_output`` (an array of root's shape), add dL/dleaf to
    ``leaf.grad`` for every leaf with ``requires_grad``. Uses ``topological_sort``."""
    raise NotImplementedError("Task 1.1: backward")
