"""Test scenarios for the kernels: a ragged batch laid out in a paged pool through shuffled,
non-contiguous block tables. Every slot no request owns holds NaN, so a kernel that reads past a
request's length (or through a padded table entry) poisons its output and fails the comparison.
Tolerances per dtype live here too.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class PagedBatch:
    k_cache: torch.Tensor      # [num_blocks, page, kv_heads, dim]
    v_cache: torch.Tensor
    block_table: torch.Tensor  # [batch, max_blocks] int32, padded with 0
    seq_lens: torch.Tensor     # [batch] int32

    def to(self, device: torch.device) -> PagedBatch:
        return PagedBatch(*(t.to(device) for t in (self.k_cache, self.v_cache, self.block_table, self.seq_lens)))


def paged_batch(seq_lens: list[int], kv_heads: int, dim: int, page: int, dtype: torch.dtype,
                seed: int = 0, spare_blocks: int = 3) -> PagedBatch:
    """Random K/V for positions 0..len-1 of each request, in randomly chosen physical blocks."""
    gen = torch.Generator().manual_seed(seed)
    counts = [-(-n // page) for n in seq_lens]
    num_blocks = sum(counts) + spare_blocks
    physical = torch.randperm(num_blocks, generator=gen)[:sum(counts)].tolist()
    table = torch.zeros(len(seq_lens), max(counts), dtype=torch.int32)
    shape = (num_blocks, page, kv_heads, dim)
    k_cache = torch.full(shape, float("nan"), dtype=dtype)
    v_cache = torch.full(shape, float("nan"), dtype=dtype)
    for b, (n, count) in enumerate(zip(seq_lens, counts)):
        blocks, physical = physical[:count], physical[count:]
        table[b, :count] = torch.tensor(blocks, dtype=torch.int32)
        for p in range(n):
            k_cache[blocks[p // page], p % page] = torch.randn(kv_heads, dim, generator=gen).to(dtype)
            v_cache[blocks[p // page], p % page] = torch.randn(kv_heads, dim, generator=gen).to(dtype)
    return PagedBatch(k_cache, v_cache, table, torch.tensor(seq_lens, dtype=torch.int32))


def random_queries(tokens: int, heads: int, dim: int, dtype: torch.dtype, seed: int = 1) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(tokens, heads, dim, generator=gen).to(dtype)


# Per dtype: (atol, rtol) against the float64 reference. fp32 products are exact (ieee); half
# precision rounds the output and, compiled, the softmax weights before the P.V product.
TOLERANCE = {
    torch.float32: (1e-4, 1e-4),
    torch.float16: (4e-3, 4e-3),
    torch.bfloat16: (3e-2, 3e-2),
}


def assert_matches(out: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype) -> None:
    atol, rtol = TOLERANCE[dtype]
    torch.testing.assert_close(out.cpu().double(), ref, atol=atol, rtol=rtol)
