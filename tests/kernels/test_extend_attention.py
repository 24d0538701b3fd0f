"""Extend attention (prefill over a paged prefix) equals the float64 reference: block boundaries,
mixed ragged batches, every GQA ratio and head dim, sliding windows, dtypes, page sizes, strided views.
"""
from __future__ import annotations

import pytest
import torch

pytest.importorskip("triton")

from engine.kernels.extend_attention import extend_attention
from tests.kernels.paged import assert_matches, paged_batch, random_queries
from tests.kernels.reference import extend_reference


def check_extend(device, prefix, new, q_heads=4, kv_heads=2, dim=64, page=16, window=0,
                 dtype=torch.float32, q=None, **tiles):
    seq = [p + n for p, n in zip(prefix, new)]
    batch = paged_batch(seq, kv_heads, dim, page, dtype)
    q = random_queries(sum(new), q_heads, dim, dtype) if q is None else q
    cu = torch.tensor([0, *torch.tensor(new).cumsum(0).tolist()], dtype=torch.int32)
    prefix_lens = torch.tensor(prefix, dtype=torch.int32)
    scale = dim ** -0.5
    ref = extend_reference(q, batch.k_cache, batch.v_cache, batch.block_table, cu, prefix_lens,
                           batch.seq_lens, scale, window)
    on = batch.to(device)
    out = extend_attention(q.to(device), on.k_cache, on.v_cache, on.block_table, cu.to(device),
                           prefix_lens.to(device), on.seq_lens, scale, window, **tiles)
    assert_matches(out, ref, dtype)


@pytest.mark.parametrize("prefix,new", [
    ([0, 0], [16, 32]),          # prompts ending exactly on a block boundary
    ([0, 0], [17, 33]),          # and just past one
    ([16, 15, 32], [16, 2, 1]),  # cached prefixes on and off boundaries, totals on / past them
], ids=["on_boundary", "past_boundary", "prefix_boundaries"])
def test_extend_at_block_boundaries(device, prefix, new):
    check_extend(device, prefix, new)


def test_batch_mixing_one_token_and_several_blocks(device):
    check_extend(device, prefix=[0, 45, 3], new=[1, 20, 1], page=8)


@pytest.mark.parametrize("q_heads,kv_heads", [(4, 4), (4, 2), (6, 2), (4, 1), (8, 1)],
                         ids=["mha", "gqa2", "gqa3", "mqa4", "mqa8"])
def test_every_gqa_ratio(device, q_heads, kv_heads):
    check_extend(device, prefix=[5, 0], new=[7, 12], q_heads=q_heads, kv_heads=kv_heads)


@pytest.mark.parametrize("dim", [64, 128, 256])
def test_every_head_dim(device, dim):
    check_extend(device, prefix=[9, 0], new=[4, 11], dim=dim, dtype=torch.float16)


@pytest.mark.parametrize("window", [1, 5, 20])
def test_sliding_window(device, window):
    """Small tiles: several query tiles per request, and key tiles before the window are skipped."""
    check_extend(device, prefix=[40, 0], new=[30, 37], window=window, BLOCK_M=16, BLOCK_N=16)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_dtypes(device, dtype):
    check_extend(device, prefix=[0, 21], new=[13, 19], dtype=dtype)


@pytest.mark.parametrize("page", [8, 32])
def test_page_sizes(device, page):
    check_extend(device, prefix=[33, 0], new=[8, 40], page=page)


def test_queries_as_a_strided_view_of_packed_qkv(device):
    qkv = random_queries(10, 4 + 2 * 1, 64, torch.float32)
    check_extend(device, prefix=[6], new=[10], q_heads=4, kv_heads=1, q=qkv[:, :4])


def test_long_prompt_in_small_tiles(device):
    check_extend(device, prefix=[70], new=[50], q_heads=2, kv_heads=1, BLOCK_M=16, BLOCK_N=32)


@pytest.mark.parametrize("seed", range(8))
def test_random_ragged_batches(device, seed):
    """Random mixes of prefix and new lengths, head layout, page, window and dtype."""
    gen = torch.Generator().manual_seed(seed)
    pick = lambda options: options[int(torch.randint(len(options), (1,), generator=gen))]
    batch = int(torch.randint(1, 5, (1,), generator=gen))
    prefix = torch.randint(0, 50, (batch,), generator=gen).tolist()
    new = torch.randint(1, 40, (batch,), generator=gen).tolist()
    q_heads, kv_heads = pick([(2, 1), (4, 2), (6, 3), (4, 4)])
    check_extend(device, prefix, new, q_heads, kv_heads, dim=pick([64, 128]), page=pick([8, 16]),
                 window=pick([0, 0, 9, 33]), dtype=pick([torch.float32, torch.float16, torch.bfloat16]),
                 BLOCK_M=pick([16, 32]), BLOCK_N=pick([16, 32]))
