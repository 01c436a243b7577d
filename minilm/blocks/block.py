"""The Transformer block: attention and an MLP, each with a residual connection and a layer norm.

    pre-LN  (GPT-2, T5):  x = x + Attn(LN₁(x));   x = x + MLP(LN₂(x))
    post-LN (BERT):       x = LN₁(x + Attn(x));   x = LN₂(x + MLP(x))

With ``cross_attention=True`` a third sublayer between the two attends to an encoder's output
(the decoder block of T5 and BART). The residual order is Task 3.4
(``solutions/task03_transformer/blocks.py``).

Letters: B batch, T time, Tk encoder length, C channels (n_embd), H heads.
"""
from __future__ import annotations

from autograd import nn, tasks
from autograd.errors import ConfigError, ShapeError

from .attention import MultiHeadAttention
from .feedforward import FeedForward

# Task 3.4: solutions/task03_transformer/blocks.py
pre_ln_forward = tasks.bind("task03_transformer.blocks", "pre_ln_forward")
post_ln_forward = tasks.bind("task03_transformer.blocks", "post_ln_forward")

NORMS = ("pre", "post")


class Block(nn.Module):
    """One Transformer layer.

    Modules: ``ln1``, ``attn`` (MultiHeadAttention), [``ln_cross``, ``cross_attn``], ``ln2``,
    ``mlp`` (FeedForward, width ``n_inner`` = 4·n_embd by default). ``norm`` is "pre" (GPT-2) or
    "post" (BERT). ``bias=False`` and ``scale=False`` are for T5 (no biases, no 1/√d).
    ``init_std`` = 0.02 gives every Linear the GPT-2/BERT init (default: PyTorch's).
    """

    def __init__(self, n_embd: int, n_head: int, n_inner: int | None = None, *, rng, norm: str = "pre",
                 activation: str = "gelu", dropout: float = 0.0, eps: float = 1e-5,
                 cross_attention: bool = False, bias: bool = True, scale: bool = True,
                 init_std: float | None = None, head_dim: int | None = None):
        super().__init__()
        if norm not in NORMS:
            raise ConfigError(f"Block: norm={norm!r}, expected one of {NORMS}")
        self.norm = norm
        n_inner = 4 * n_embd if n_inner is None else n_inner
        attn_args = dict(rng=rng, dropout=dropout, bias=bias, scale=scale, init_std=init_std, head_dim=head_dim)
        self.ln1 = nn.LayerNorm(n_embd, eps=eps)
        self.attn = MultiHeadAttention(n_embd, n_head, **attn_args)
        if cross_attention:
            self.ln_cross = nn.LayerNorm(n_embd, eps=eps)
            self.cross_attn = MultiHeadAttention(n_embd, n_head, **attn_args)
        else:
            self.ln_cross = self.cross_attn = None
        self.ln2 = nn.LayerNorm(n_embd, eps=eps)
        self.mlp = FeedForward(n_embd, n_inner, rng=rng, activation=activation, dropout=dropout,
                               bias=bias, init_std=init_std)

    def forward(self, x, mask=None, enc=None, enc_mask=None, bias=None):
        """x (B, T, C); mask for the self-attention; enc (B, Tk, C) and enc_mask for the
        cross-attention (a block built with ``cross_attention=True`` needs ``enc``); bias an
        additive score tensor for the self-attention (T5). Returns (B, T, C)."""
        if self.cross_attn is not None and enc is None:
            raise ShapeError("Block: this block has cross-attention; pass the encoder output enc=(B, Tk, C)")
        if self.cross_attn is None and enc is not None:
            raise ShapeError("Block: enc was given, but this block was built without cross_attention=True")
        run = pre_ln_forward if self.norm == "pre" else post_ln_forward
        return run(self, x, mask=mask, enc=enc, enc_mask=enc_mask, bias=bias)

    def extra_repr(self):
        return f"norm={self.norm!r}"
