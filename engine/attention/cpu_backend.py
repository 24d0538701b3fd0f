"""`CpuBackend`: the engine's CPU attention. Decode runs the C kernel of `cpu_kernels` (each query reads
its K/V in place through the block table: no gather, no padding, no mask); extend, and any decode the
kernel does not take (a dtype other than float32 / bfloat16), run the torch reference.
"""
from __future__ import annotations

from engine.attention.backend import DecodeMetadata
from engine.attention.cpu_kernels import paged_decode
from engine.attention.torch_ref import TorchReferenceBackend


class CpuBackend(TorchReferenceBackend):
    name = "cpu"
    graph_safe = True    # decode reads lengths and tables from tensors (max_seq_len only sizes scratch)

    def decode(self, q, k_cache, v_cache, meta: DecodeMetadata, sliding_window: int, scale: float):
        out = paged_decode(q, k_cache, v_cache, meta.block_table, meta.seq_lens, meta.max_seq_len,
                           sliding_window, scale)
        return out if out is not None else super().decode(q, k_cache, v_cache, meta, sliding_window, scale)
