"""The store kernel writes each new token's K/V into exactly its slot and nowhere else."""
from __future__ import annotations

import pytest
import torch

pytest.importorskip("triton")

from engine.kernels.store_kv import store_kv
from tests.kernels.reference import store_reference


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("page", [8, 16])
def test_store_writes_exactly_its_slots(device, dtype, page):
    gen = torch.Generator().manual_seed(page)
    blocks, heads, dim, tokens = 6, 2, 64, 13
    slots = torch.randperm(blocks * page, generator=gen)[:tokens]
    slots[4] = -1                                                  # padding: skipped
    qkv = torch.randn(tokens, (4 + 2 * heads) * dim, generator=gen).to(dtype)
    k = qkv[:, 4 * dim:(4 + heads) * dim].view(tokens, heads, dim)  # strided views, as the model makes them
    v = qkv[:, (4 + heads) * dim:].view(tokens, heads, dim)
    k_cache = torch.full((blocks, page, heads, dim), -7.0, dtype=dtype)
    v_cache = torch.full_like(k_cache, -9.0)
    k_expected, v_expected = k_cache.clone(), v_cache.clone()
    store_reference(k, v, k_expected, v_expected, slots)
    k_cache, v_cache = k_cache.to(device), v_cache.to(device)
    store_kv(k.to(device), v.to(device), k_cache, v_cache, slots.to(device))
    assert torch.equal(k_cache.cpu(), k_expected) and torch.equal(v_cache.cpu(), v_expected)


def test_store_into_a_layer_of_a_stacked_pool(device):
    gen = torch.Generator().manual_seed(0)
    pool = torch.zeros(2, 3, 4, 8, 1, 64)                           # [K/V, layers, blocks, page, heads, dim]
    k, v = torch.randn(5, 1, 64, generator=gen), torch.randn(5, 1, 64, generator=gen)
    slots = torch.tensor([31, 0, 9, 8, 17])
    expected = pool.clone()
    store_reference(k, v, expected[0, 1], expected[1, 1], slots)
    pool = pool.to(device)
    store_kv(k.to(device), v.to(device), pool[0, 1], pool[1, 1], slots.to(device))
    assert torch.equal(pool.cpu(), expected)
