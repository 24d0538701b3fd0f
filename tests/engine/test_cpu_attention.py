"""The CPU decode kernel (engine/attention/cpu_decode.c) against hand-written attention on the same
paged pools: float32 and bfloat16, GQA ratios, sliding windows, head dims with and without a constant
loop, shuffled block tables; and its fallback where it cannot run.
"""
from __future__ import annotations

import pytest
import torch

from engine.attention.backend import DecodeMetadata
from engine.attention.cpu_backend import CpuBackend
from engine.attention.cpu_kernels import available, paged_decode
from tests.engine.test_attention_ref import naive

pytestmark = pytest.mark.skipif(not available(), reason="no C compiler: the CPU kernel is not built")
BS = 4


def paged(lengths: list[int], hkv: int, d: int, dtype: torch.dtype, seed: int):
    """Random K/V per sequence scattered through shuffled block tables (as test_attention_ref does)."""
    g = torch.Generator().manual_seed(seed)
    nblocks = [-(-n // BS) for n in lengths]
    order = torch.randperm(sum(nblocks) + 3, generator=g).tolist()
    pool_k, pool_v = torch.zeros(len(order), BS, hkv, d, dtype=dtype), torch.zeros(len(order), BS, hkv, d, dtype=dtype)
    tables, kv = [], []
    for n, nb in zip(lengths, nblocks):
        table, order = order[:nb], order[nb:]
        k, v = torch.randn(n, hkv, d, generator=g).to(dtype), torch.randn(n, hkv, d, generator=g).to(dtype)
        for p in range(n):
            pool_k[table[p // BS], p % BS], pool_v[table[p // BS], p % BS] = k[p], v[p]
        tables.append(table)
        kv.append((k, v))
    width = max(nblocks)
    return pool_k, pool_v, torch.tensor([t + [0] * (width - len(t)) for t in tables], dtype=torch.int32), kv


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.bfloat16, 2e-2)], ids=["fp32", "bf16"])
@pytest.mark.parametrize("hq,hkv", [(4, 4), (9, 3), (6, 1)])
@pytest.mark.parametrize("window", [0, 3])
@pytest.mark.parametrize("d", [16, 64])
def test_decode_kernel_matches_naive(dtype, tol, hq, hkv, window, d):
    lengths = [1, 4, 9, 13, 30]
    pool_k, pool_v, table, kv = paged(lengths, hkv, d, dtype, seed=hq + window + d)
    q = torch.randn(len(lengths), hq, d).to(dtype)
    out = paged_decode(q, pool_k, pool_v, table, torch.tensor(lengths, dtype=torch.int32), max(lengths), window, 0.3)
    assert out.dtype == dtype and out.shape == q.shape
    for b, (k, v) in enumerate(kv):
        want = naive(q[b:b + 1].float(), k.float(), v.float(), [lengths[b] - 1], window, 0.3)
        torch.testing.assert_close(out[b:b + 1].float(), want, atol=tol, rtol=tol)


def test_backend_decodes_with_the_kernel_and_falls_back_for_float16():
    lengths = [5, 11]
    pool_k, pool_v, table, _ = paged(lengths, 2, 16, torch.float16, seed=1)
    q = torch.randn(2, 4, 16, dtype=torch.float16)
    meta = DecodeMetadata(torch.tensor(lengths, dtype=torch.int32), table, max(lengths), lengths)
    assert paged_decode(q, pool_k, pool_v, table, meta.seq_lens, 11, 0, 0.25) is None   # not a kernel dtype
    out = CpuBackend().decode(q, pool_k, pool_v, meta, 0, 0.25)                        # the torch path
    assert out.shape == q.shape and out.dtype == torch.float16


def test_kernel_leaves_denormals_alone():
    """Loading the library must not switch the process to flush-to-zero (a -ffast-math link would)."""
    assert available()
    tiny = torch.tensor([1e-40], dtype=torch.float32)
    assert (tiny * 1.0).item() != 0.0


def test_an_engine_on_the_kernel_gives_the_reference_tokens():
    """GQA, a sliding-window layer, chunked prefill, prefix reuse and batches of mixed lengths."""
    from tests.engine.tiny_model import greedy_tokens, tiny_engine
    ours = tiny_engine(attention_backend="cpu")
    assert ours.runner.backend.name == "cpu"
    assert greedy_tokens(ours) == greedy_tokens(tiny_engine(attention_backend="torch"))
