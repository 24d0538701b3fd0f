"""llama.cpp's q/k row permutation and our inverse of it."""
from __future__ import annotations

import pytest
import torch

from engine.loader.permute import permute_qk, unpermute_qk


def test_permute_interleaves_the_two_rotary_halves_of_each_head():
    w = torch.arange(8).float().unsqueeze(1)             # 2 heads x head_dim 4, one input column
    assert permute_qk(w, n_heads=2).squeeze(1).tolist() == [0, 2, 1, 3, 4, 6, 5, 7]


def test_unpermute_restores_hf_order():
    w = torch.tensor([0, 2, 1, 3, 4, 6, 5, 7]).float().unsqueeze(1)
    assert unpermute_qk(w, n_heads=2).squeeze(1).tolist() == list(range(8))


@pytest.mark.parametrize("n_heads,head_dim,cols", [(9, 64, 576), (3, 64, 576), (4, 8, 1), (1, 2, 3)])
def test_unpermute_inverts_permute_for_weights_and_biases(n_heads, head_dim, cols):
    w = torch.randn(n_heads * head_dim, cols)
    assert torch.equal(unpermute_qk(permute_qk(w, n_heads), n_heads), w)
    b = torch.randn(n_heads * head_dim)
    assert torch.equal(unpermute_qk(permute_qk(b, n_heads), n_heads), b)


def test_rows_that_do_not_split_into_heads_are_refused():
    with pytest.raises(AssertionError):
        unpermute_qk(torch.randn(10, 4), n_heads=3)
