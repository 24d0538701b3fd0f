"""`decode_attention`: one query token per request against its paged K/V, split along the sequence
(flash-decoding) so that a few long requests still fill the GPU, then merged by log-sum-exp.

Stage 1, grid (requests, kv heads, splits): a program takes the GROUP query heads that share one KV
head as the rows of a tile (padded to 16 for tl.dot), so each K/V tile is read once per group, and
writes its split's normalised partial output and base-2 log-sum-exp. Stage 2, grid (requests, q heads),
weights the partials by exp2(lse - max). With one split, stage 1 writes the output directly.
"""
from __future__ import annotations

import functools
import math

import torch
import triton
import triton.language as tl

from engine.kernels.common import check_pool, dot_options, paged_offsets
from engine.kernels.extend_attention import NO_WINDOW

MIN_SPLIT_TOKENS = 256   # a split shorter than this costs more in the merge than it gains
MAX_SPLITS = 32


@triton.jit
def _decode_split_kernel(Q, K, V, MidO, MidLse, BlockTable, SeqLens, scale_log2, window,
                         stride_qb, stride_qh, stride_mb, stride_mh, stride_ms, stride_lb, stride_lh,
                         stride_kb, stride_ks, stride_kh, stride_vb, stride_vs, stride_vh, stride_bt,
                         GROUP: tl.constexpr, BLOCK_H: tl.constexpr, PAGE: tl.constexpr,
                         HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr,
                         WRITE_LSE: tl.constexpr, UPCAST: tl.constexpr, PRECISION: tl.constexpr):
    req, kv_head, split = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    num_splits = tl.num_programs(2)
    seq_len = tl.load(SeqLens + req)
    lo = tl.maximum(seq_len - window, 0)                     # first position inside the window
    per_split = tl.cdiv(tl.cdiv(seq_len - lo, num_splits), BLOCK_N) * BLOCK_N
    start = lo + split * per_split
    end = tl.minimum(start + per_split, seq_len)
    g = tl.arange(0, BLOCK_H)
    heads = kv_head * GROUP + g
    h_ok = g < GROUP
    d = tl.arange(0, BLOCK_D)
    d_ok = d < HEAD_DIM
    q = tl.load(Q + req.to(tl.int64) * stride_qb + heads[:, None] * stride_qh + d[None, :],
                mask=h_ok[:, None] & d_ok[None, :], other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    table_row = BlockTable + req.to(tl.int64) * stride_bt

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_D], tl.float32)
    for pos in range(start, end, BLOCK_N):
        cols = pos + tl.arange(0, BLOCK_N)
        col_ok = cols < end
        k_off = paged_offsets(table_row, cols, col_ok, PAGE, stride_kb, stride_ks) + kv_head * stride_kh
        k = tl.load(K + k_off[None, :] + d[:, None], mask=col_ok[None, :] & d_ok[:, None], other=0.0)
        v_off = paged_offsets(table_row, cols, col_ok, PAGE, stride_vb, stride_vs) + kv_head * stride_vh
        v = tl.load(V + v_off[:, None] + d[None, :], mask=col_ok[:, None] & d_ok[None, :], other=0.0)
        if UPCAST:
            k, v = k.to(tl.float32), v.to(tl.float32)
        s = tl.dot(q, k, input_precision=PRECISION) * scale_log2          # [H, N], log2 units
        s = tl.where(col_ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m_i = m_new
    out = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]          # an empty split writes zeros
    mid = MidO + req.to(tl.int64) * stride_mb + heads[:, None] * stride_mh + split * stride_ms + d[None, :]
    tl.store(mid, out.to(MidO.dtype.element_ty), mask=h_ok[:, None] & d_ok[None, :])
    if WRITE_LSE:
        lse = tl.where(l_i > 0, m_i + tl.math.log2(tl.where(l_i > 0, l_i, 1.0)), float("-inf"))
        tl.store(MidLse + req * stride_lb + heads * stride_lh + split, lse, mask=h_ok)


@triton.jit
def _decode_merge_kernel(MidO, MidLse, O, num_splits,
                         stride_mb, stride_mh, stride_ms, stride_lb, stride_lh, stride_ob, stride_oh,
                         HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_S: tl.constexpr):
    req, head = tl.program_id(0), tl.program_id(1)
    s = tl.arange(0, BLOCK_S)
    s_ok = s < num_splits
    d = tl.arange(0, BLOCK_D)
    d_ok = d < HEAD_DIM
    lse = tl.load(MidLse + req * stride_lb + head * stride_lh + s, mask=s_ok, other=float("-inf"))
    weight = tl.math.exp2(lse - tl.max(lse, 0))              # empty splits weigh exp2(-inf) = 0
    parts = tl.load(MidO + req * stride_mb + head * stride_mh + s[:, None] * stride_ms + d[None, :],
                    mask=s_ok[:, None] & d_ok[None, :], other=0.0)
    out = tl.sum(parts * weight[:, None], 0) / tl.sum(weight, 0)
    tl.store(O + req * stride_ob + head * stride_oh + d, out.to(O.dtype.element_ty), mask=d_ok)


def num_kv_splits(batch: int, kv_heads: int, max_seq_len: int, num_sms: int) -> int:
    """Enough splits for about two programs per SM, but none shorter than MIN_SPLIT_TOKENS."""
    wanted = triton.cdiv(2 * num_sms, max(batch * kv_heads, 1))
    by_length = triton.cdiv(max_seq_len, MIN_SPLIT_TOKENS)
    return max(1, min(wanted, by_length, MAX_SPLITS))


@functools.lru_cache(maxsize=8)
def device_sms(device: torch.device) -> int:
    """Streaming multiprocessors of a CUDA device; a nominal 16 elsewhere (the interpreter)."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 16


def decode_config(head_dim: int, dtype: torch.dtype) -> dict:
    """Key tile and launch options: 64 keys per step up to head_dim 128, 32 above or for fp32."""
    wide = head_dim > 128 or dtype == torch.float32
    return {"BLOCK_N": 32 if wide else 64, "num_warps": 4, "num_stages": 2}


def decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                     block_table: torch.Tensor, seq_lens: torch.Tensor, scale: float | None = None,
                     sliding_window: int = 0, max_seq_len: int | None = None,
                     num_splits: int | None = None, out: torch.Tensor | None = None,
                     **config) -> torch.Tensor:
    """q: [batch, q_heads, head_dim]; seq_lens [batch] int32 (including the new token, already
    stored); block_table [batch, max_blocks] int32; caches [blocks, page, kv_heads, head_dim].
    Returns [batch, q_heads, head_dim]. num_splits defaults to `num_kv_splits` (max_seq_len, if
    not given, is read from the block table's width, avoiding a device sync)."""
    page, kv_heads, dim = check_pool(k_cache, v_cache)
    batch, q_heads, q_dim = q.shape
    assert q_dim == dim and q_heads % kv_heads == 0 and q.stride(-1) == 1
    out = torch.empty_like(q) if out is None else out
    if batch == 0:
        return out
    if num_splits is None:
        longest = max_seq_len if max_seq_len is not None else block_table.shape[1] * page
        if sliding_window > 0:
            longest = min(longest, sliding_window)
        num_splits = num_kv_splits(batch, kv_heads, longest, device_sms(q.device))
    cfg = {**decode_config(dim, q.dtype), **config}
    group = q_heads // kv_heads
    block_d = triton.next_power_of_2(dim)
    if num_splits == 1:
        mid_o, mid_lse = out.unsqueeze(2), out                       # stage 1 writes the output
    else:
        mid_o = torch.empty(batch, q_heads, num_splits, dim, dtype=torch.float32, device=q.device)
        mid_lse = torch.empty(batch, q_heads, num_splits, dtype=torch.float32, device=q.device)
    _decode_split_kernel[(batch, kv_heads, num_splits)](
        q, k_cache, v_cache, mid_o, mid_lse, block_table, seq_lens,
        (dim ** -0.5 if scale is None else scale) * math.log2(math.e),
        sliding_window if sliding_window > 0 else NO_WINDOW,
        q.stride(0), q.stride(1), mid_o.stride(0), mid_o.stride(1), mid_o.stride(2),
        mid_lse.stride(0), mid_lse.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), block_table.stride(0),
        GROUP=group, BLOCK_H=max(16, triton.next_power_of_2(group)), PAGE=page, HEAD_DIM=dim,
        BLOCK_D=block_d, WRITE_LSE=num_splits > 1, **dot_options(q.dtype), **cfg)
    if num_splits > 1:
        _decode_merge_kernel[(batch, q_heads)](
            mid_o, mid_lse, out, num_splits, mid_o.stride(0), mid_o.stride(1), mid_o.stride(2),
            mid_lse.stride(0), mid_lse.stride(1), out.stride(0), out.stride(1),
            HEAD_DIM=dim, BLOCK_D=block_d, BLOCK_S=triton.next_power_of_2(num_splits), num_warps=4)
    return out
