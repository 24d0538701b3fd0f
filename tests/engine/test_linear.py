"""Linear / PackedLinear: both weight layouts compute nn.Linear's result; packed parts land in place."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from engine.layers.linear import Linear, PackedLinear, prefers_transposed


def filled(layer):
    return layer.to_empty(device="cpu")


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_both_layouts_match_nn_linear(transposed, bias):
    w, b, x = torch.randn(24, 16), torch.randn(24), torch.randn(5, 16)
    layer = filled(Linear(16, 24, bias, transposed))
    layer.load("weight", w)
    if bias:
        layer.load("bias", b)
    assert torch.allclose(layer(x), F.linear(x, w, b if bias else None), atol=1e-5)
    assert layer.weight.shape == ((16, 24) if transposed else (24, 16))


@pytest.mark.parametrize("transposed", [False, True])
def test_packed_parts_equal_separate_projections(transposed):
    q, k, v = torch.randn(8, 6), torch.randn(4, 6), torch.randn(4, 6)
    layer = filled(PackedLinear(6, [8, 4, 4], bias=False, transposed=transposed))
    for i, part in enumerate((q, k, v)):
        layer.load("weight", part, i)
    x = torch.randn(3, 6)
    assert torch.allclose(layer(x), torch.cat([x @ q.t(), x @ k.t(), x @ v.t()], dim=-1), atol=1e-5)


def test_a_part_of_the_wrong_size_is_refused():
    layer = filled(PackedLinear(6, [8, 4], bias=False))
    with pytest.raises(AssertionError):
        layer.load("weight", torch.randn(4, 6), 0)


def test_transposed_layout_only_for_fp32_on_cpu():
    assert prefers_transposed("cpu", torch.float32)
    assert not prefers_transposed("cpu", torch.float16)
    assert not prefers_transposed("cuda", torch.float32)
