"""`TritonBackend`: the engine's CUDA attention, the Triton kernels of `engine.kernels` behind the
`AttentionBackend` interface. Importing it needs `triton`; `select_backend` picks it on CUDA.
On CPU it runs only under Triton's interpreter (TRITON_INTERPRET=1), which the tests use.
"""
from __future__ import annotations

import torch

from engine.attention.backend import AttentionBackend, DecodeMetadata, ExtendMetadata
from engine.kernels.decode_attention import decode_attention
from engine.kernels.extend_attention import extend_attention
from engine.kernels.store_kv import store_kv


def last_dim_contiguous(x: torch.Tensor) -> torch.Tensor:
    return x if x.stride(-1) == 1 else x.contiguous()


class TritonBackend(AttentionBackend):
    name = "triton"
    graph_safe = True    # decode plans its splits from max_seq_len; a capture says the longest context

    def store_kv(self, k, v, k_cache, v_cache, slot_mapping) -> None:
        store_kv(last_dim_contiguous(k), last_dim_contiguous(v), k_cache, v_cache, slot_mapping)

    def decode(self, q, k_cache, v_cache, meta: DecodeMetadata, sliding_window: int, scale: float):
        return decode_attention(last_dim_contiguous(q), k_cache, v_cache, meta.block_table, meta.seq_lens,
                                scale, sliding_window, max_seq_len=meta.max_seq_len)

    def extend(self, q, k_cache, v_cache, meta: ExtendMetadata, sliding_window: int, scale: float):
        return extend_attention(last_dim_contiguous(q), k_cache, v_cache, meta.block_table, meta.cu_q_lens,
                                meta.prefix_lens, meta.seq_lens, scale, sliding_window,
                                max_q_len=meta.max_q_len)
