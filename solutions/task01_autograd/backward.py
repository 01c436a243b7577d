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
    # BEGIN SOLUTION
    order, visited = [], set()
    stack = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))  # come back after the parents are placed
        if node._ctx is not None:
            for parent in node._ctx.parents:
                if parent.requires_grad and id(parent) not in visited:
                    stack.append((parent, False))
    return order
    # END SOLUTION


def backward(root, grad_output):
    """Task 1.1: given dL/droot = ``grad_output`` (an array of root's shape), add dL/dleaf to
    ``leaf.grad`` for every leaf with ``requires_grad``. Uses ``topological_sort``."""
    # BEGIN SOLUTION
    grads = {id(root): grad_output}
    for node in reversed(topological_sort(root)):
        grad = grads.pop(id(node), None)
        if grad is None:
            continue
        if node._ctx is None:  # a leaf: the gradient is complete, keep it
            node.grad = grad.copy() if node.grad is None else node.grad + grad
            continue
        for parent, g in zip(node._ctx.parents, node._ctx.backward(grad)):
            if g is None or not parent.requires_grad:
                continue
            key = id(parent)
            grads[key] = g if key not in grads else grads[key] + g
    # END SOLUTION
