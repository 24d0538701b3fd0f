"""The oracle for the Triton kernels: plain torch in float64 that gathers each request's K/V
position by position through its block table and applies an explicit causal/window mask.
It shares no code with `engine.kernels`; the kernel tests trust it and nothing else.
"""
from __future__ import annotations

import torch


def gather(cache: torch.Tensor, table_row: torch.Tensor, length: int) -> torch.Tensor:
    """Positions 0..length-1 of one request from a pool [blocks, page, heads, dim] -> [length, heads, dim]."""
    page = cache.shape[1]
    rows = [cache[int(table_row[p // page]), p % page] for p in range(length)]
    return torch.stack(rows).double()


def visible(q_positions: torch.Tensor, length: int, window: int) -> torch.Tensor:
    """[Tq, length] bool: key position k is seen by query position p iff k <= p and (no window or k > p - window)."""
    k = torch.arange(length)[None, :]
    p = q_positions[:, None]
    mask = k <= p
    if window > 0:
        mask &= k > p - window
    return mask


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, scale: float) -> torch.Tensor:
    """q [T, Hq, D]; k, v [S, Hkv, D]; mask [T, S] -> [T, Hq, D] in float64, each KV head repeated for its group."""
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    scores = torch.einsum("thd,shd->hts", q.double(), k) * scale
    scores = scores.masked_fill(~mask[None], float("-inf"))
    return torch.einsum("hts,shd->thd", scores.softmax(-1), v)


def extend_reference(q, k_cache, v_cache, block_table, cu_q_lens, prefix_lens, seq_lens, scale, window=0):
    """The extend contract, one request at a time -> [total_new, Hq, D] float64."""
    outs = []
    for b in range(len(prefix_lens)):
        lo, hi = int(cu_q_lens[b]), int(cu_q_lens[b + 1])
        prefix, length = int(prefix_lens[b]), int(seq_lens[b])
        assert length == prefix + hi - lo
        k, v = gather(k_cache, block_table[b], length), gather(v_cache, block_table[b], length)
        mask = visible(torch.arange(prefix, length), length, window)
        outs.append(attend(q[lo:hi], k, v, mask, scale))
    return torch.cat(outs)


def decode_reference(q, k_cache, v_cache, block_table, seq_lens, scale, window=0):
    """The decode contract: query b sits at position seq_lens[b]-1 -> [batch, Hq, D] float64."""
    outs = []
    for b in range(q.shape[0]):
        length = int(seq_lens[b])
        k, v = gather(k_cache, block_table[b], length), gather(v_cache, block_table[b], length)
        mask = visible(torch.tensor([length - 1]), length, window)
        outs.append(attend(q[b:b + 1], k, v, mask, scale))
    return torch.cat(outs)


def store_reference(k, v, k_cache, v_cache, slot_mapping) -> None:
    """Token t's K/V go to block slot // page, offset slot % page; negative slots are skipped."""
    page = k_cache.shape[1]
    for t, slot in enumerate(slot_mapping.tolist()):
        if slot >= 0:
            k_cache[slot // page, slot % page] = k[t]
            v_cache[slot // page, slot % page] = v[t]
