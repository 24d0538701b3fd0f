"""The torch reference backend against attention written out by hand (float64 softmax over an explicit
mask) on contiguous K/V: shuffled block tables, ragged extends over cached prefixes, decode batches of
mixed lengths, GQA ratios, sliding windows, and the store through the slot mapping.
"""
from __future__ import annotations

import math

import pytest
import torch

from engine.attention.backend import DecodeMetadata, ExtendMetadata
from engine.attention.selection import select_backend
from engine.attention.torch_ref import TorchReferenceBackend

BS, D = 4, 16


def naive(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, positions: list[int], window: int,
          scale: float) -> torch.Tensor:
    """q [n, Hq, D] at `positions`; k, v [L, Hkv, D] for positions 0..L-1 -> [n, Hq, D]."""
    group = q.shape[1] // k.shape[1]
    k, v = k.double().repeat_interleave(group, 1), v.double().repeat_interleave(group, 1)
    scores = torch.einsum("nhd,lhd->hnl", q.double(), k) * scale
    kpos, qpos = torch.arange(k.shape[0])[None, :], torch.tensor(positions)[:, None]
    mask = (kpos <= qpos) & ((kpos > qpos - window) if window else True)
    scores = scores.masked_fill(~mask, -math.inf)
    return torch.einsum("hnl,lhd->nhd", scores.softmax(-1), v).float()


def paged(lengths: list[int], hkv: int, seed: int):
    """Random K/V per sequence, scattered into a pool through shuffled block tables."""
    g = torch.Generator().manual_seed(seed)
    nblocks = [-(-n // BS) for n in lengths]
    order = torch.randperm(sum(nblocks) + 3, generator=g).tolist()
    tables, kv, pool_k, pool_v = [], [], torch.zeros(len(order), BS, hkv, D), torch.zeros(len(order), BS, hkv, D)
    for n, nb in zip(lengths, nblocks):
        table, order = order[:nb], order[nb:]
        k, v = torch.randn(n, hkv, D, generator=g), torch.randn(n, hkv, D, generator=g)
        for p in range(n):
            pool_k[table[p // BS], p % BS], pool_v[table[p // BS], p % BS] = k[p], v[p]
        tables.append(table)
        kv.append((k, v))
    width = max(nblocks)
    table = torch.tensor([t + [0] * (width - len(t)) for t in tables], dtype=torch.int32)
    return pool_k, pool_v, table, kv


@pytest.mark.parametrize("hq,hkv", [(4, 4), (4, 2), (6, 1)])
@pytest.mark.parametrize("window", [0, 5])
def test_extend_over_cached_prefixes_matches_naive(hq, hkv, window):
    prefixes, new = [0, 3, 8, 1], [5, 4, 1, 9]             # ends on, just past and inside blocks
    lengths = [p + n for p, n in zip(prefixes, new)]
    pool_k, pool_v, table, kv = paged(lengths, hkv, seed=hq + window)
    q = torch.randn(sum(new), hq, D)
    cu = [0]
    for n in new:
        cu.append(cu[-1] + n)
    meta = ExtendMetadata(torch.tensor(cu, dtype=torch.int32), torch.tensor(prefixes, dtype=torch.int32),
                          torch.tensor(lengths, dtype=torch.int32), table, max(new), max(lengths), new, prefixes)
    out = TorchReferenceBackend().extend(q, pool_k, pool_v, meta, window, 0.3)
    for b, (k, v) in enumerate(kv):
        want = naive(q[cu[b]:cu[b + 1]], k, v, list(range(prefixes[b], lengths[b])), window, 0.3)
        torch.testing.assert_close(out[cu[b]:cu[b + 1]], want, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("hq,hkv", [(4, 4), (4, 2), (6, 1)])
@pytest.mark.parametrize("window", [0, 3])
@pytest.mark.parametrize("lengths", [[7], [1, 4, 9, 13]])
@pytest.mark.parametrize("per_request_from", [10_000, 1], ids=["padded-batch", "per-request"])
def test_decode_batch_matches_naive(hq, hkv, window, lengths, per_request_from):
    pool_k, pool_v, table, kv = paged(lengths, hkv, seed=len(lengths) + hq)
    q = torch.randn(len(lengths), hq, D)
    meta = DecodeMetadata(torch.tensor(lengths, dtype=torch.int32), table, max(lengths), lengths)
    backend = TorchReferenceBackend()
    backend.per_request_from = per_request_from          # both decode paths: one masked call, a call each
    out = backend.decode(q, pool_k, pool_v, meta, window, 0.25)
    for b, (k, v) in enumerate(kv):
        want = naive(q[b:b + 1], k, v, [lengths[b] - 1], window, 0.25)
        torch.testing.assert_close(out[b:b + 1], want, atol=1e-5, rtol=1e-5)


def test_store_writes_each_token_to_its_slot():
    k_cache, v_cache = torch.zeros(5, BS, 2, D), torch.zeros(5, BS, 2, D)
    k, v = torch.randn(3, 2, D), torch.randn(3, 2, D)
    slots = torch.tensor([4 * BS + 1, 0, 2 * BS + 3])
    TorchReferenceBackend().store_kv(k, v, k_cache, v_cache, slots)
    assert torch.equal(k_cache[4, 1], k[0]) and torch.equal(k_cache[0, 0], k[1])
    assert torch.equal(v_cache[2, 3], v[2])
    written = torch.zeros(5, BS, dtype=torch.bool)
    written[4, 1] = written[0, 0] = written[2, 3] = True
    assert not k_cache[~written].any() and not v_cache[~written].any()      # nothing else touched


def test_cpu_selects_the_c_kernel_when_it_builds_and_the_reference_on_request():
    from engine.attention.cpu_kernels import available
    assert select_backend("cpu").name == ("cpu" if available() else "torch")
    assert select_backend("cpu", "torch").name == "torch"
    with pytest.raises(ValueError):
        select_backend("cpu", "flash")
