"""What the kernels share: block-table addressing of the paged pool, the pool's shape checks, and the
launch-time choices that depend on dtype and on running interpreted (operand upcast, dot precision).
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl


@triton.jit
def paged_offsets(table_row, pos, mask, PAGE: tl.constexpr, stride_block, stride_slot):
    """Element offsets of token positions `pos` in a pool [blocks, PAGE, heads, dim], read through one
    block-table row (logical block -> physical block). Masked positions read block 0."""
    block = tl.load(table_row + pos // PAGE, mask=mask, other=0).to(tl.int64)
    return block * stride_block + (pos % PAGE).to(tl.int64) * stride_slot


def interpreting() -> bool:
    """True when triton runs kernels on the CPU interpreter (TRITON_INTERPRET=1)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def dot_options(dtype: torch.dtype) -> dict:
    """UPCAST: the interpreter's half-precision tl.dot is unreliable, so operands go to fp32 there.
    PRECISION: fp32 inputs get exact (ieee) products, never tf32."""
    return {"UPCAST": interpreting() and dtype != torch.float32,
            "PRECISION": "ieee" if dtype == torch.float32 else "tf32"}


def check_pool(k_cache: torch.Tensor, v_cache: torch.Tensor) -> tuple[int, int, int]:
    """A K/V pool pair [num_blocks, block_size, num_kv_heads, head_dim]; returns (block_size, heads, dim)."""
    assert k_cache.dim() == 4 and k_cache.shape == v_cache.shape, "pool must be [blocks, page, heads, dim]"
    assert k_cache.stride(-1) == 1 and v_cache.stride(-1) == 1, "head_dim must be contiguous"
    page = k_cache.shape[1]
    assert page >= 1 and page & (page - 1) == 0, f"block size {page} must be a power of two"
    return page, k_cache.shape[2], k_cache.shape[3]
