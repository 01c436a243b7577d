"""Multi-head attention (Vaswani et al. 2017, §3.2): self-attention and cross-attention.

    MultiHead(X, S) = Concat(head₁, …, head_H) W_O,   headₕ = softmax(X W_Qʰ (S W_Kʰ)ᵀ / √d + b) S W_Vʰ

S = X for self-attention; S = the encoder's output for cross-attention. The lessons live in the task
slots: scaled dot-product attention with masks (Task 3.1, ``solutions/task03_transformer/attention.py``)
and splitting/merging heads (Task 3.2, ``solutions/task03_transformer/heads.py``). This module holds
the parameters and runs the formula: ``MultiHeadAttention.forward`` calls the slots in its order.

Parameter names follow Hugging Face's BART/Llama layout (``q_proj``, ``k_proj``, ``v_proj``,
``out_proj``, each a Linear C → C), which maps one-to-one onto BERT's query/key/value/output.dense
and onto GPT-2's fused ``c_attn`` (split in three) and ``c_proj``.

Letters: B batch, Tq queries, Tk keys, C channels (n_embd), H heads, d = C / H.
"""
from __future__ import annotations

from autograd import nn, tasks
from autograd.errors import ConfigError, ShapeError

from .masks import check_mask

# Task 3.1: solutions/task03_transformer/attention.py
scaled_dot_product_attention = tasks.bind("task03_transformer.attention", "scaled_dot_product_attention")
# Task 3.2: solutions/task03_transformer/heads.py
split_heads = tasks.bind("task03_transformer.heads", "split_heads")
merge_heads = tasks.bind("task03_transformer.heads", "merge_heads")


class MultiHeadAttention(nn.Module):
    """H attention heads of width d = n_embd / n_head over one (C → C) projection each for Q, K, V
    and an output projection.

    ``scale=False`` leaves out the 1/√d (T5, whose initialisation absorbs it). ``bias=False`` drops
    the projections' biases (T5). ``dropout`` applies to the attention weights and to the output
    (GPT-2's ``attn_dropout`` and ``resid_dropout``); it needs ``rng`` when > 0, like every random
    operation. ``init_std`` = 0.02 gives the GPT-2/BERT init N(0, 0.02²) (default: PyTorch's).

    After each call ``self.last_attention`` holds the weights as a NumPy array (B, H, Tq, Tk), for
    plots and for distillation objectives that match attention maps.
    """

    def __init__(self, n_embd: int, n_head: int, *, rng, dropout: float = 0.0, bias: bool = True,
                 scale: bool = True, init_std: float | None = None, head_dim: int | None = None):
        super().__init__()
        if n_head <= 0 or (head_dim is None and n_embd % n_head) or (head_dim is not None and head_dim < 1):
            raise ConfigError(f"MultiHeadAttention: n_embd={n_embd} must be a positive multiple of "
                              f"n_head={n_head} (or give head_dim >= 1, got {head_dim!r})")
        # head_dim: d; None = C / H. T5 v1.1 sets it apart (d_kv): the projections are then C → H·d
        self.n_embd, self.n_head = n_embd, n_head
        self.head_dim = n_embd // n_head if head_dim is None else int(head_dim)
        inner = n_head * self.head_dim
        self.scale = bool(scale)
        self.q_proj = nn.Linear(n_embd, inner, bias=bias, rng=rng, init_std=init_std)
        self.k_proj = nn.Linear(n_embd, inner, bias=bias, rng=rng, init_std=init_std)
        self.v_proj = nn.Linear(n_embd, inner, bias=bias, rng=rng, init_std=init_std)
        self.out_proj = nn.Linear(inner, n_embd, bias=bias, rng=rng, init_std=init_std)
        self.attn_dropout = nn.Dropout(dropout, rng=rng if dropout > 0 else None)
        self.resid_dropout = nn.Dropout(dropout, rng=rng if dropout > 0 else None)
        self.last_attention = None

    def forward(self, x, mask=None, kv=None, bias=None):
        """x (B, Tq, C); kv None (self-attention) or (B, Tk, C) (cross-attention); mask a boolean
        array broadcastable to (B, H, Tq, Tk), True = may attend; bias an additive score tensor
        broadcastable to (B, H, Tq, Tk). Returns (B, Tq, C).

        The steps of §3.2.2: the queries come from x, the keys and values from the sequence S they
        answer from — x itself, or the encoder's output ``kv`` (the decoder asks, the encoder
        answers); each is projected and split into H heads (Task 3.2), every head attends at once
        (Task 3.1), and the heads are merged and projected by W_O."""
        if x.ndim != 3 or x.shape[-1] != self.n_embd:
            raise ShapeError(f"MultiHeadAttention: x of shape {x.shape}, expected (B, T, {self.n_embd})")
        B, Tq, _ = x.shape
        Tk = Tq
        if kv is not None:
            if kv.ndim != 3 or kv.shape[0] != B or kv.shape[-1] != self.n_embd:
                raise ShapeError(f"MultiHeadAttention: kv of shape {kv.shape} for x of shape {x.shape}, "
                                 f"expected ({B}, Tk, {self.n_embd})")
            Tk = kv.shape[1]
        mask = check_mask("MultiHeadAttention", mask, (B, self.n_head, Tq, Tk))
        source = x if kv is None else kv                          # S: x, or the encoder's output
        q = split_heads(self.q_proj(x), self.n_head)              # (B, H, Tq, d)
        k = split_heads(self.k_proj(source), self.n_head)         # (B, H, Tk, d)
        v = split_heads(self.v_proj(source), self.n_head)         # (B, H, Tk, d)
        out, probs = scaled_dot_product_attention(q, k, v, mask=mask, bias=bias, scale=self.scale,
                                                  dropout=self.attn_dropout)  # (B, H, Tq, d), (B, H, Tq, Tk)
        self.last_attention = probs.data
        y = self.out_proj(merge_heads(out))                       # (B, Tq, C)
        return self.resid_dropout(y)

    def extra_repr(self):
        return f"n_embd={self.n_embd}, n_head={self.n_head}, scale={self.scale}"
