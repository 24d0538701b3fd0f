"""The model side of attention: a layer hands this step's q, k, v to the attention backend, which
stores k, v in the paged pool and attends through the block table. `ForwardContext` carries what
every layer of one step shares (metadata, pool, backend, positions).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from engine.attention.backend import AttentionBackend, AttentionMetadata
from engine.kv.pool import KVPool


@dataclass
class ForwardContext:
    meta: AttentionMetadata
    pool: KVPool
    backend: AttentionBackend
    positions: torch.Tensor          # int64 [num_tokens], in the packed order of the metadata


class Attention(nn.Module):
    def __init__(self, layer: int, num_heads: int, num_kv_heads: int, head_dim: int, scale: float,
                 sliding_window: int = 0) -> None:
        super().__init__()
        assert num_heads % num_kv_heads == 0
        self.layer, self.num_heads, self.num_kv_heads = layer, num_heads, num_kv_heads
        self.scale, self.sliding_window = scale, sliding_window

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, ctx: ForwardContext) -> torch.Tensor:
        """q: [T, Hq, D]; k, v: [T, Hkv, D] -> [T, Hq*D]."""
        meta, backend = ctx.meta, ctx.backend
        k_cache, v_cache = ctx.pool.k(self.layer), ctx.pool.v(self.layer)
        backend.store_kv(k, v, k_cache, v_cache, meta.slot_mapping)
        nd, parts = meta.num_decode_tokens, []
        if meta.decode is not None:
            parts.append(backend.decode(q[:nd], k_cache, v_cache, meta.decode, self.sliding_window, self.scale))
        if meta.extend is not None:
            parts.append(backend.extend(q[nd:], k_cache, v_cache, meta.extend, self.sliding_window, self.scale))
        out = parts[0] if len(parts) == 1 else torch.cat(parts)
        return out.reshape(q.shape[0], -1)
