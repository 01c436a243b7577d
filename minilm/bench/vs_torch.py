"""GPT-mini in PyTorch, the twin that ``minilm bench --vs-torch`` times beside ours.

Imported only by ``minilm bench --vs-torch`` (and only when PyTorch is installed: the optional
``bench`` extra, ``pip install minilm[bench]`` with a CPU build of torch). Nothing else in minilm
touches torch.

The model is ours op for op, written as a PyTorch user would write it in eager mode (nanoGPT's
explicit attention path, not a fused kernel): learned token and position embeddings, pre-LN blocks
with separate q/k/v/out projections (with biases), the causal mask, softmax, tanh-GELU MLP of
width 4·C, a final LayerNorm, the output layer tied to the token embedding, mean cross-entropy,
AdamW with PyTorch's defaults (which ours copies). The parameters have our names, and
``load_from`` copies a minilm GPT's weights in, so both compute the same function — the benchmark
checks that their first losses agree.

Letters: B batch, T time, C channels, H heads, d = C / H, V vocabulary.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from minilm.bench.workloads import gpt_batch


class Attention(nn.Module):
    def __init__(self, C: int, H: int):
        super().__init__()
        self.n_head = H
        self.q_proj, self.k_proj = nn.Linear(C, C), nn.Linear(C, C)
        self.v_proj, self.out_proj = nn.Linear(C, C), nn.Linear(C, C)

    def forward(self, x, mask):
        B, T, C = x.shape
        H, d = self.n_head, C // self.n_head
        q = self.q_proj(x).view(B, T, H, d).transpose(1, 2)                # (B, H, T, d)
        k = self.k_proj(x).view(B, T, H, d).transpose(1, 2)
        v = self.v_proj(x).view(B, T, H, d).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d))             # (B, H, T, T)
        att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)                     # (B, T, C)
        return self.out_proj(y)


class MLP(nn.Module):
    def __init__(self, C: int):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, C: int, H: int):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(C), Attention(C, H)
        self.ln2, self.mlp = nn.LayerNorm(C), MLP(C)

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.mlp(self.ln2(x))


class TorchGPT(nn.Module):
    def __init__(self, vocab_size: int, block_size: int, n_layer: int, n_head: int, n_embd: int):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, idx, labels):
        """The mean loss of predicting ``labels[:, t + 1]`` at position t (labels aligned with idx)."""
        B, T = idx.shape
        x = self.wte(idx) + self.wpe(torch.arange(T))                      # (B, T, C)
        mask = self.mask[:T, :T]
        for block in self.blocks:
            x = block(x, mask)
        logits = self.ln_f(x) @ self.wte.weight.T                          # (B, T, V), tied
        return F.cross_entropy(logits[:, :-1].reshape(B * (T - 1), -1), labels[:, 1:].reshape(B * (T - 1)))

    def load_from(self, named_arrays) -> None:
        """Copy weights from ``(name, array)`` pairs with our names (``model.named_parameters()``)."""
        own = dict(self.named_parameters())
        with torch.no_grad():
            for name, value in named_arrays:
                own[name].copy_(torch.from_numpy(np.ascontiguousarray(value)))


def gpt_mini(sizes, *, seed: int = 0, weights=None, threads: int | None = None):
    """The PyTorch GPT-mini workload: ``(step, info)``; ``step()`` runs one AdamW step and returns
    the loss. ``weights``: ``named_parameters()`` of a minilm GPT to start from (same function)."""
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    model = TorchGPT(sizes.vocab_size, sizes.block_size, sizes.n_layer, sizes.n_head, sizes.n_embd)
    if weights is not None:
        model.load_from((name, p.data) for name, p in weights)
    opt = torch.optim.AdamW(model.parameters(), lr=sizes.lr)  # β = (0.9, 0.999), ε = 1e-8, λ = 0.01: ours
    ids = torch.from_numpy(np.ascontiguousarray(gpt_batch(sizes, seed + 1)))

    def step() -> float:
        opt.zero_grad(set_to_none=True)
        loss = model(ids, ids)
        loss.backward()
        opt.step()
        return float(loss.item())

    return step, {"torch": torch.__version__, "torch_threads": torch.get_num_threads()}
