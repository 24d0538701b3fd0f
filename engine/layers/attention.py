"""Attention over a sequence's cached keys/values: the boundary that KV handling sits behind.

The model hands this step's q, k, v and an `AttentionContext`; the context's cache stores k, v and
returns every position's keys/values. A paged cache and Triton kernels replace this file, not the model.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from engine.kv_cache import KVCache


@dataclass
class AttentionContext:
    cache: KVCache
    start: int                 # tokens already cached before this step = position of the first new token
    positions: torch.Tensor    # [T] int64, start .. start+T-1


def decode_attention(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, scale: float) -> torch.Tensor:
    """One new token. q: [1, Hq, D]; keys, values: [Hkv, S, D] -> [1, Hq*D].
    Query heads sharing a kv head are stacked as rows, so GQA needs no key repetition and no mask."""
    hkv, _, d = keys.shape
    out = F.scaled_dot_product_attention(q.view(hkv, -1, d), keys, values, scale=scale)  # [Hkv, group, D]
    return out.reshape(1, -1)


def prefill_attention(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, start: int,
                      scale: float) -> torch.Tensor:
    """T new tokens after `start` cached ones. q: [T, Hq, D]; keys, values: [Hkv, start+T, D] -> [T, Hq*D]."""
    t = q.shape[0]
    mask = None
    if start > 0:  # new token i sees every cached position and new positions <= i
        kpos = torch.arange(start + t, device=q.device)
        mask = kpos[None, :] <= (start + torch.arange(t, device=q.device))[:, None]   # [T, S]
    out = F.scaled_dot_product_attention(q.transpose(0, 1), keys, values, attn_mask=mask,
                                         is_causal=start == 0, scale=scale, enable_gqa=True)  # [Hq, T, D]
    return out.transpose(0, 1).reshape(t, -1)


class Attention(nn.Module):
    def __init__(self, layer: int, num_heads: int, num_kv_heads: int, head_dim: int) -> None:
        super().__init__()
        assert num_heads % num_kv_heads == 0
        self.layer, self.num_heads, self.num_kv_heads = layer, num_heads, num_kv_heads
        self.scale = head_dim ** -0.5

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                ctx: AttentionContext) -> torch.Tensor:
        """q: [T, Hq, D]; k, v: [T, Hkv, D] -> [T, Hq*D]."""
        keys, values = ctx.cache.store(self.layer, ctx.start, k, v)
        if q.shape[0] == 1:
            return decode_attention(q, keys, values, self.scale)
        return prefill_attention(q, keys, values, ctx.start, self.scale)
