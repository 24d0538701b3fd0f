"""The row permutation llama.cpp's converter applies to attn_q / attn_k, and its inverse.

The converter interleaves each head's two rotary halves for its own RoPE kernel; we use the
HF "rotate_half" layout, so GGUF llama weights are un-permuted on load.
"""
from __future__ import annotations

import torch


def permute_qk(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """HF layout -> llama.cpp layout. w: [n_heads * head_dim, *in] (weight or bias)."""
    rows = w.shape[0]
    assert rows % (2 * n_heads) == 0, f"{rows} rows cannot split into {n_heads} heads of two halves"
    half = rows // n_heads // 2
    return w.reshape(n_heads, 2, half, *w.shape[1:]).transpose(1, 2).reshape(w.shape)


def unpermute_qk(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """llama.cpp layout -> HF layout; the exact inverse of `permute_qk`."""
    rows = w.shape[0]
    assert rows % (2 * n_heads) == 0, f"{rows} rows cannot split into {n_heads} heads of two halves"
    half = rows // n_heads // 2
    return w.reshape(n_heads, half, 2, *w.shape[1:]).transpose(1, 2).reshape(w.shape).contiguous()
