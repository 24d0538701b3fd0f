"""Per-request contiguous KV cache: one preallocated [layers, kv_heads, capacity, head_dim] pair.

The simplest store behind the attention boundary; the paged block pool of the next milestone
replaces it without touching the model.
"""
from __future__ import annotations

import torch


class KVCache:
    def __init__(self, num_layers: int, num_kv_heads: int, head_dim: int, capacity: int,
                 dtype: torch.dtype, device: torch.device | str) -> None:
        assert capacity > 0
        self.capacity = capacity
        self.k = torch.empty(num_layers, num_kv_heads, capacity, head_dim, dtype=dtype, device=device)
        self.v = torch.empty_like(self.k)

    def store(self, layer: int, start: int, k: torch.Tensor,
              v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write k, v [T, Hkv, D] at positions start..start+T-1.
        Returns the keys, values of positions 0..start+T-1 as views [Hkv, start+T, D]."""
        end = start + k.shape[0]
        assert 0 <= start and end <= self.capacity, f"KV cache overflow: {end} > {self.capacity}"
        self.k[layer, :, start:end] = k.transpose(0, 1)
        self.v[layer, :, start:end] = v.transpose(0, 1)
        return self.k[layer, :, :end], self.v[layer, :, :end]

    @property
    def nbytes(self) -> int:
        return 2 * self.k.numel() * self.k.element_size()
