"""`store_kv`: write this step's new K/V rows into their pool slots (slot = block * page + offset).

One program per new token copies its [kv_heads, head_dim] K and V tiles; a negative slot (padding)
is skipped. The pool may be any strided view whose head_dim is contiguous.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from engine.kernels.common import check_pool


@triton.jit
def _store_kv_kernel(K, V, KCache, VCache, Slots,
                     stride_kt, stride_kh, stride_vt, stride_vh,
                     stride_kb, stride_ks, stride_kch, stride_vb, stride_vs, stride_vch,
                     PAGE: tl.constexpr, HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
                     BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr):
    token = tl.program_id(0)
    slot = tl.load(Slots + token)
    if slot < 0:
        return
    block, offset = slot // PAGE, slot % PAGE
    h = tl.arange(0, BLOCK_H)[:, None]
    d = tl.arange(0, BLOCK_D)[None, :]
    ok = (h < HEADS) & (d < HEAD_DIM)
    k = tl.load(K + token * stride_kt + h * stride_kh + d, mask=ok)
    v = tl.load(V + token * stride_vt + h * stride_vh + d, mask=ok)
    tl.store(KCache + block * stride_kb + offset * stride_ks + h * stride_kch + d,
             k.to(KCache.dtype.element_ty), mask=ok)
    tl.store(VCache + block * stride_vb + offset * stride_vs + h * stride_vch + d,
             v.to(VCache.dtype.element_ty), mask=ok)


def store_kv(k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
             slot_mapping: torch.Tensor) -> None:
    """k, v: [T, kv_heads, head_dim] (head_dim contiguous); caches: [blocks, page, kv_heads, head_dim];
    slot_mapping: [T] int64. Writes k[t], v[t] at slot_mapping[t] in place."""
    page, heads, dim = check_pool(k_cache, v_cache)
    tokens = slot_mapping.shape[0]
    assert k.shape == v.shape == (tokens, heads, dim), f"k/v {tuple(k.shape)} vs pool heads {heads}, dim {dim}"
    assert k.stride(-1) == 1 and v.stride(-1) == 1
    if tokens == 0:
        return
    _store_kv_kernel[(tokens,)](
        k, v, k_cache, v_cache, slot_mapping,
        k.stride(0), k.stride(1), v.stride(0), v.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        PAGE=page, HEADS=heads, HEAD_DIM=dim,
        BLOCK_H=triton.next_power_of_2(heads), BLOCK_D=triton.next_power_of_2(dim), num_warps=4)
