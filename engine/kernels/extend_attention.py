"""`extend_attention`: the new query tokens of a ragged batch attend to their request's paged K/V
(cached prefix and the new tokens, already stored), causally, with an optional sliding window.

Grid (query tiles, requests, query heads): a program holds BLOCK_M query rows of one head in
registers and streams key tiles of BLOCK_N positions through the block table with an online
softmax (base-2 exponent, fp32 accumulators). Only key tiles inside [window start, last row] load.
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from engine.kernels.common import check_pool, dot_options, paged_offsets

NO_WINDOW = 1 << 30   # a window wider than any context: the mask then reduces to causal


@triton.jit
def _extend_kernel(Q, K, V, O, BlockTable, CuQLens, PrefixLens, SeqLens, scale_log2, window,
                   stride_qt, stride_qh, stride_ot, stride_oh,
                   stride_kb, stride_ks, stride_kh, stride_vb, stride_vs, stride_vh, stride_bt,
                   GROUP: tl.constexpr, PAGE: tl.constexpr, HEAD_DIM: tl.constexpr,
                   BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   UPCAST: tl.constexpr, PRECISION: tl.constexpr):
    tile, req, head = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    q_first = tl.load(CuQLens + req)
    q_len = tl.load(CuQLens + req + 1) - q_first
    if tile * BLOCK_M >= q_len:
        return
    prefix = tl.load(PrefixLens + req)
    seq_len = tl.load(SeqLens + req)
    kv_head = head // GROUP
    rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < q_len
    q_pos = prefix + rows                                   # absolute positions of the query rows
    d = tl.arange(0, BLOCK_D)
    d_ok = d < HEAD_DIM
    q_ptrs = Q + (q_first + rows)[:, None].to(tl.int64) * stride_qt + head * stride_qh + d[None, :]
    q = tl.load(q_ptrs, mask=row_ok[:, None] & d_ok[None, :], other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    table_row = BlockTable + req.to(tl.int64) * stride_bt

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    first_pos = prefix + tile * BLOCK_M
    lo = (tl.maximum(first_pos - window + 1, 0) // BLOCK_N) * BLOCK_N
    hi = tl.minimum(seq_len, first_pos + BLOCK_M)           # past the last row's own position
    for start in range(lo, hi, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        col_ok = cols < hi
        k_off = paged_offsets(table_row, cols, col_ok, PAGE, stride_kb, stride_ks) + kv_head * stride_kh
        k = tl.load(K + k_off[None, :] + d[:, None], mask=col_ok[None, :] & d_ok[:, None], other=0.0)
        v_off = paged_offsets(table_row, cols, col_ok, PAGE, stride_vb, stride_vs) + kv_head * stride_vh
        v = tl.load(V + v_off[:, None] + d[None, :], mask=col_ok[:, None] & d_ok[None, :], other=0.0)
        if UPCAST:
            k, v = k.to(tl.float32), v.to(tl.float32)
        s = tl.dot(q, k, input_precision=PRECISION) * scale_log2          # [M, N], log2 units
        keep = col_ok[None, :] & (cols[None, :] <= q_pos[:, None]) & (cols[None, :] > q_pos[:, None] - window)
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)   # fully masked rows stay finite
        p = tl.math.exp2(s - m_use[:, None])
        alpha = tl.math.exp2(m_i - m_use)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m_i = m_new
    out = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    o_ptrs = O + (q_first + rows)[:, None].to(tl.int64) * stride_ot + head * stride_oh + d[None, :]
    tl.store(o_ptrs, out.to(O.dtype.element_ty), mask=row_ok[:, None] & d_ok[None, :])


def extend_config(head_dim: int, dtype: torch.dtype) -> dict:
    """Tile sizes and launch options: 64x64 tiles up to head_dim 128, narrower key tiles above and for
    fp32 (twice the shared memory), and 32 query rows for fp32 at head_dim 256 (about 100 KiB of it)."""
    wide, fp32 = head_dim > 128, dtype == torch.float32
    return {"BLOCK_M": 32 if wide and fp32 else 64, "BLOCK_N": 32 if wide or fp32 else 64,
            "num_warps": 8 if wide else 4, "num_stages": 2}


def extend_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                     block_table: torch.Tensor, cu_q_lens: torch.Tensor, prefix_lens: torch.Tensor,
                     seq_lens: torch.Tensor, scale: float | None = None, sliding_window: int = 0,
                     max_q_len: int | None = None, out: torch.Tensor | None = None,
                     **config) -> torch.Tensor:
    """q: [total_new, q_heads, head_dim] packed by cu_q_lens [batch+1] (int32); prefix_lens and
    seq_lens [batch] (int32; seq = prefix + new); block_table [batch, max_blocks] int32; caches
    [blocks, page, kv_heads, head_dim] already holding the new K/V. Returns [total_new, q_heads, head_dim].
    max_q_len (longest new span) sizes the grid; given, it saves a device sync. `config` overrides tiles."""
    page, kv_heads, dim = check_pool(k_cache, v_cache)
    tokens, q_heads, q_dim = q.shape
    assert q_dim == dim and q_heads % kv_heads == 0 and q.stride(-1) == 1
    batch = prefix_lens.shape[0]
    out = torch.empty_like(q) if out is None else out
    if tokens == 0 or batch == 0:
        return out
    if max_q_len is None:
        max_q_len = int((cu_q_lens[1:] - cu_q_lens[:-1]).max())
    cfg = {**extend_config(dim, q.dtype), **config}
    scale = dim ** -0.5 if scale is None else scale
    grid = (triton.cdiv(max_q_len, cfg["BLOCK_M"]), batch, q_heads)
    _extend_kernel[grid](
        q, k_cache, v_cache, out, block_table, cu_q_lens, prefix_lens, seq_lens,
        scale * math.log2(math.e), sliding_window if sliding_window > 0 else NO_WINDOW,
        q.stride(0), q.stride(1), out.stride(0), out.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), block_table.stride(0),
        GROUP=q_heads // kv_heads, PAGE=page, HEAD_DIM=dim, BLOCK_D=triton.next_power_of_2(dim),
        **dot_options(q.dtype), **cfg)
    return out
