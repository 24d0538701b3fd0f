"""The attention interface every backend implements, the batch metadata it reads, and the choice of
backend for a device. This docstring is the contract the kernels are written against.

KV pool: per layer a K and a V tensor shaped [num_blocks, block_size, num_kv_heads, head_dim]
(views of one [num_layers, 2, num_blocks, block_size, num_kv_heads, head_dim] tensor, zero-filled at
start so positions never written read as finite numbers).
`block_table`: int32 [batch, max_blocks_per_seq], rows padded with 0 past a sequence's blocks.
`slot_mapping`: int64 [num_new_tokens] = block_id * block_size + offset, where `store_kv` writes the
step's new K/V before attention runs.

A step's new tokens are packed decode requests first, then extend requests:
- decode: q [batch, num_q_heads, head_dim], one token per request; `seq_lens` int32 [batch] counts
  the new token; the query sits at position seq_len - 1.
- extend (prefill, possibly over a cached prefix, ragged): q [total_new_tokens, num_q_heads, head_dim],
  `cu_q_lens` int32 [batch + 1], `prefix_lens` int32 [batch] (tokens in the cache before this step),
  `seq_lens` int32 [batch] (prefix + new). Query token i of request b sits at position
  prefix_lens[b] + i and attends causally to positions <= its own.
Both take `sliding_window` (0 = none; else position p attends to (p - window, p]) and `scale`, and
return [tokens, num_q_heads, head_dim] in q's dtype. GQA: query head h reads KV head h // (Hq / Hkv).
Host-side copies (`*_host` lists) ride along so CPU code never syncs with the device.

Backends: `engine.attention.selection.select_backend(device, name)` returns the Triton backend on CUDA when
`engine.attention.triton_backend` imports and defines `TritonBackend` (an `AttentionBackend` built with
no arguments); on CPU the `CpuBackend` (a C decode kernel) when its kernel builds; else
`TorchReferenceBackend`. `prepare(meta)` runs once per step before the layers (a
backend may plan split counts or scratch buffers there); the default does nothing.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass

import torch


@dataclass
class DecodeMetadata:
    seq_lens: torch.Tensor          # int32 [batch], including the new token
    block_table: torch.Tensor       # int32 [batch, max_blocks]
    max_seq_len: int
    seq_lens_host: list[int]


@dataclass
class ExtendMetadata:
    cu_q_lens: torch.Tensor         # int32 [batch + 1]
    prefix_lens: torch.Tensor       # int32 [batch]
    seq_lens: torch.Tensor          # int32 [batch], prefix + new
    block_table: torch.Tensor       # int32 [batch, max_blocks]
    max_q_len: int
    max_seq_len: int
    q_lens_host: list[int]
    prefix_lens_host: list[int]


@dataclass
class AttentionMetadata:
    """One step's layout: `num_decode_tokens` decode queries first, then the extend queries."""
    slot_mapping: torch.Tensor      # int64 [num_tokens]
    num_decode_tokens: int
    decode: DecodeMetadata | None
    extend: ExtendMetadata | None


class AttentionBackend(abc.ABC):
    name = "abstract"
    graph_safe = False   # reads lengths and tables only from device tensors: a captured step may replay it

    def prepare(self, meta: AttentionMetadata) -> None:
        """Once per step, before any layer runs."""

    @abc.abstractmethod
    def store_kv(self, k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                 slot_mapping: torch.Tensor) -> None:
        """k, v: [num_tokens, num_kv_heads, head_dim] -> the pool slots named by slot_mapping."""

    @abc.abstractmethod
    def extend(self, q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, meta: ExtendMetadata,
               sliding_window: int, scale: float) -> torch.Tensor:
        """q: [total_new_tokens, Hq, D] -> [total_new_tokens, Hq, D]."""

    @abc.abstractmethod
    def decode(self, q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, meta: DecodeMetadata,
               sliding_window: int, scale: float) -> torch.Tensor:
        """q: [batch, Hq, D] -> [batch, Hq, D]."""
