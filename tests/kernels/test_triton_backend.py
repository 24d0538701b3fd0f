"""The Triton backend honours the engine's attention interface: one mixed step (decode requests first,
then extend requests over cached prefixes) stores the same pool and returns what the torch reference
backend returns, with and without a sliding window. And the engine picks it on CUDA only."""
from __future__ import annotations

import pytest
import torch

pytest.importorskip("triton")

from engine.attention.backend import AttentionMetadata, DecodeMetadata, ExtendMetadata
from engine.attention.selection import select_backend
from engine.attention.torch_ref import TorchReferenceBackend
from engine.attention.triton_backend import TritonBackend

PAGE, HQ, HKV, D = 8, 4, 2, 64
DECODE_LENS = [1, 19]                   # including this step's token
PREFIXES, NEW = [0, 13], [5, 11]        # extend requests


def int32(values, device) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.int32, device=device)


def layout(device, gen):
    """Shuffled block tables for the four requests; slots of this step's tokens, decode first."""
    lengths = DECODE_LENS + [p + n for p, n in zip(PREFIXES, NEW)]
    counts = [-(-n // PAGE) for n in lengths]
    physical = torch.randperm(sum(counts) + 4, generator=gen).tolist()
    tables = torch.zeros(len(lengths), max(counts), dtype=torch.int32)
    for r, c in enumerate(counts):
        tables[r, :c], physical = torch.tensor(physical[:c]), physical[c:]
    new_positions = [[n - 1] for n in DECODE_LENS] + [list(range(p, p + n)) for p, n in zip(PREFIXES, NEW)]
    slots = [int(tables[r, pos // PAGE]) * PAGE + pos % PAGE for r, ps in enumerate(new_positions) for pos in ps]
    return tables.to(device), torch.tensor(slots, device=device), lengths


def metadata(tables, slots, lengths, device) -> AttentionMetadata:
    nd = len(DECODE_LENS)
    decode = DecodeMetadata(int32(DECODE_LENS, device), tables[:nd], max(DECODE_LENS), DECODE_LENS)
    cu = [0] + torch.tensor(NEW).cumsum(0).tolist()
    extend = ExtendMetadata(int32(cu, device), int32(PREFIXES, device), int32(lengths[nd:], device),
                            tables[nd:], max(NEW), max(lengths[nd:]), NEW, PREFIXES)
    return AttentionMetadata(slots, nd, decode, extend)


def step(backend, q, k, v, k_cache, v_cache, meta, window):
    backend.store_kv(k, v, k_cache, v_cache, meta.slot_mapping)
    nd = meta.num_decode_tokens
    return torch.cat([backend.decode(q[:nd], k_cache, v_cache, meta.decode, window, D ** -0.5),
                      backend.extend(q[nd:], k_cache, v_cache, meta.extend, window, D ** -0.5)])


@pytest.mark.parametrize("window", [0, 6])
def test_mixed_step_matches_torch_reference(device, window):
    gen = torch.Generator().manual_seed(window)
    tables, slots, lengths = layout(device, gen)
    meta = metadata(tables, slots, lengths, device)
    tokens = len(DECODE_LENS) + sum(NEW)
    pool = torch.randn(2, tables.max().item() + 1, PAGE, HKV, D, generator=gen).to(device)  # the cached prefixes
    qkv = torch.randn(tokens, HQ + 2 * HKV, D, generator=gen).to(device)
    q, k, v = qkv.split([HQ, HKV, HKV], dim=1)                  # strided views, as the model makes them
    ours, theirs = pool.clone(), pool.clone()
    out = step(TritonBackend(), q, k, v, ours[0], ours[1], meta, window)
    ref = step(TorchReferenceBackend(), q, k, v, theirs[0], theirs[1], meta, window)
    assert torch.equal(ours, theirs)
    torch.testing.assert_close(out, ref, atol=1e-4, rtol=1e-4)


def test_engine_selects_triton_on_cuda_and_the_reference_elsewhere():
    assert isinstance(select_backend(torch.device("cuda")), TritonBackend)
    assert isinstance(select_backend("cuda:1", "auto"), TritonBackend)
    assert isinstance(select_backend("cpu"), TorchReferenceBackend)
    assert isinstance(select_backend("cuda", "torch"), TorchReferenceBackend)
    assert isinstance(select_backend("cpu", "triton"), TritonBackend)   # forced: the interpreted tests
