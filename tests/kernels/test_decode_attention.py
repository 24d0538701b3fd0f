"""Split-KV paged decode equals the float64 reference whatever the split count (including empty
splits and one long request), and for every GQA ratio, head dim, window, dtype and page size.
"""
from __future__ import annotations

import pytest
import torch

pytest.importorskip("triton")

from engine.kernels.decode_attention import MAX_SPLITS, decode_attention, num_kv_splits
from tests.kernels.paged import assert_matches, paged_batch, random_queries
from tests.kernels.reference import decode_reference


def check_decode(device, seq, q_heads=4, kv_heads=2, dim=64, page=16, window=0,
                 dtype=torch.float32, num_splits=None, **tiles):
    batch = paged_batch(seq, kv_heads, dim, page, dtype)
    q = random_queries(len(seq), q_heads, dim, dtype)
    scale = dim ** -0.5
    ref = decode_reference(q, batch.k_cache, batch.v_cache, batch.block_table, batch.seq_lens, scale, window)
    on = batch.to(device)
    out = decode_attention(q.to(device), on.k_cache, on.v_cache, on.block_table, on.seq_lens, scale,
                           window, num_splits=num_splits, **tiles)
    assert_matches(out, ref, dtype)


@pytest.mark.parametrize("num_splits", [1, 2, 3, 8])
def test_splits_merge_to_the_same_answer(device, num_splits):
    """Lengths on and past block boundaries, one single token; 8 splits leave short requests with empty ones."""
    check_decode(device, [1, 16, 17, 70], num_splits=num_splits, BLOCK_N=16)


@pytest.mark.parametrize("num_splits", [None, 7])
def test_single_long_request(device, num_splits):
    check_decode(device, [600], q_heads=2, kv_heads=1, num_splits=num_splits, BLOCK_N=32)


def test_batch_mixing_one_token_and_several_blocks(device):
    check_decode(device, [1, 75], page=8, num_splits=3)


@pytest.mark.parametrize("q_heads,kv_heads", [(4, 4), (4, 2), (6, 2), (4, 1), (32, 1)],
                         ids=["mha", "gqa2", "gqa3", "mqa4", "mqa32"])
def test_every_gqa_ratio(device, q_heads, kv_heads):
    check_decode(device, [33, 9], q_heads=q_heads, kv_heads=kv_heads, num_splits=2)


@pytest.mark.parametrize("dim", [64, 128, 256])
def test_every_head_dim(device, dim):
    check_decode(device, [40, 3], dim=dim, dtype=torch.float16, num_splits=2)


@pytest.mark.parametrize("window,num_splits", [(1, 1), (7, 3), (40, 2), (500, 4)])
def test_sliding_window(device, window, num_splits):
    check_decode(device, [100, 5, 41], window=window, num_splits=num_splits, BLOCK_N=16)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_dtypes(device, dtype):
    check_decode(device, [50, 17], dtype=dtype, num_splits=3)


@pytest.mark.parametrize("page", [8, 32])
def test_page_sizes(device, page):
    check_decode(device, [64, 31], page=page, num_splits=2)


def test_split_heuristic():
    """Many programs already: one split. One long request: many, but none under 256 tokens, capped."""
    assert num_kv_splits(batch=64, kv_heads=8, max_seq_len=4096, num_sms=132) == 1
    assert num_kv_splits(batch=1, kv_heads=8, max_seq_len=4096, num_sms=132) == 16
    assert num_kv_splits(batch=1, kv_heads=8, max_seq_len=300, num_sms=132) == 2
    assert num_kv_splits(batch=1, kv_heads=1, max_seq_len=1 << 20, num_sms=132) == MAX_SPLITS


@pytest.mark.parametrize("seed", range(8))
def test_random_batches(device, seed):
    """Random mixes of lengths, head layout, page, window, dtype and split count."""
    gen = torch.Generator().manual_seed(seed)
    pick = lambda options: options[int(torch.randint(len(options), (1,), generator=gen))]
    seq = torch.randint(1, 200, (int(torch.randint(1, 6, (1,), generator=gen)),), generator=gen).tolist()
    q_heads, kv_heads = pick([(2, 1), (4, 2), (6, 3), (8, 8)])
    check_decode(device, seq, q_heads, kv_heads, dim=pick([64, 128]), page=pick([8, 16]),
                 window=pick([0, 0, 9, 70]), dtype=pick([torch.float32, torch.float16, torch.bfloat16]),
                 num_splits=pick([None, 1, 2, 5]), BLOCK_N=pick([16, 32]))
