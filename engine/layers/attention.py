"""The model side of attention: a layer hands this step's q, k, v to the attention backend, which
stores k, v in the paged pool and attends through the block table. `ForwardContext` carries what
every layer of one step shares (metadata, pool, backend, positions).

Inside a compiled layer the same work runs as one opaque custom op, `cachegate::attention`, which
reads the step's context from `stepping` (set per thread around the forward pass), so the compiled
graph holds neither the pool nor the step's metadata and serves every layer and every step.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
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


_STEP = threading.local()


@contextmanager
def stepping(ctx: ForwardContext) -> Iterator[None]:
    """The context compiled layers' attention reads during one forward pass on this thread."""
    previous, _STEP.ctx = getattr(_STEP, "ctx", None), ctx
    try:
        yield
    finally:
        _STEP.ctx = previous


def attend(ctx: ForwardContext, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int,
           scale: float) -> torch.Tensor:
    """Store this step's k, v of `layer`, then attend: q [T, Hq, D]; k, v [T, Hkv, D] -> [T, Hq*D]."""
    meta, backend = ctx.meta, ctx.backend
    k_cache, v_cache = ctx.pool.k(layer), ctx.pool.v(layer)
    backend.store_kv(k, v, k_cache, v_cache, meta.slot_mapping)
    nd, parts = meta.num_decode_tokens, []
    if meta.decode is not None:
        parts.append(backend.decode(q[:nd], k_cache, v_cache, meta.decode, window, scale))
    if meta.extend is not None:
        parts.append(backend.extend(q[nd:], k_cache, v_cache, meta.extend, window, scale))
    out = parts[0] if len(parts) == 1 else torch.cat(parts)
    return out.reshape(q.shape[0], -1)


@torch.library.custom_op("cachegate::attention", mutates_args=())
def attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, layer: torch.Tensor, window: int,
                 scale: float) -> torch.Tensor:
    """`attend` for compiled graphs: the layer index is a tensor so one graph serves every layer; the
    pool write is a side effect the graph does not see (the result depends on it, so it always runs)."""
    return attend(_STEP.ctx, int(layer), q, k, v, window, scale)


@attention_op.register_fake
def _(q, k, v, layer, window, scale):
    return q.new_empty(q.shape[0], q.shape[1] * q.shape[2])


class Attention(nn.Module):
    def __init__(self, layer: int, num_heads: int, num_kv_heads: int, head_dim: int, scale: float,
                 sliding_window: int = 0) -> None:
        super().__init__()
        assert num_heads % num_kv_heads == 0
        self.layer, self.num_heads, self.num_kv_heads = layer, num_heads, num_kv_heads
        self.scale, self.sliding_window = scale, sliding_window
        self.layer_index: torch.Tensor | None = None   # int64 0-d on CPU, for the compiled op (set once built)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, ctx: ForwardContext) -> torch.Tensor:
        """q: [T, Hq, D]; k, v: [T, Hkv, D] -> [T, Hq*D]."""
        if torch.compiler.is_compiling():
            return attention_op(q, k, v, self.layer_index, self.sliding_window, self.scale)
        return attend(ctx, self.layer, q, k, v, self.sliding_window, self.scale)
