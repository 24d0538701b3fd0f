"""Linear / PackedLinear: every weight layout (plain, transposed, oneDNN-packed) computes nn.Linear's result;
packed parts land in place; tied heads share the embedding."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from engine.config import cpu_has_native_bf16
from engine.layers.linear import EVERY_ROW, Linear, PackedLinear, packed_rows, prefers_transposed


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


mkldnn = pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="torch built without oneDNN")


# oneDNN packs bf16 weights only on CPUs with bf16 instructions; elsewhere the engine never asks it to.
native_bf16 = pytest.mark.skipif(not cpu_has_native_bf16(), reason="this CPU has no bf16 instructions")


@mkldnn
@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), pytest.param(torch.bfloat16, 1e-2, marks=native_bf16)],
                         ids=["fp32", "bf16"])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("rows", [1, 3, 16, 37, 512])
def test_packed_layer_computes_f_linear_at_any_row_count(dtype, tol, transposed, rows):
    w, b = torch.randn(48, 32).to(dtype), torch.randn(48).to(dtype)
    layer = filled(Linear(32, 48, True, transposed)).to(dtype)
    layer.load("weight", w)
    layer.load("bias", b)
    layer.pack()
    assert layer.weight is None and layer.packed is not None
    x = torch.randn(rows, 32).to(dtype)
    torch.testing.assert_close(layer(x), F.linear(x, w, b), atol=tol, rtol=tol)


@mkldnn
def test_a_tied_head_packs_a_copy_and_leaves_the_embedding():
    embedding = torch.nn.Parameter(torch.randn(50, 8))
    head = Linear.sharing(embedding)
    assert head.weight is embedding
    head.pack(keep_weight=True)
    assert head.weight is embedding
    x = torch.randn(4, 8)
    torch.testing.assert_close(head(x), x @ embedding.t())


def test_packing_follows_the_dtype_and_the_cpus_bf16_support(monkeypatch):
    from engine.layers import linear
    monkeypatch.setattr(linear, "cpu_has_native_bf16", lambda: False)
    assert packed_rows("cpu", torch.bfloat16) is None
    monkeypatch.setattr(linear, "cpu_has_native_bf16", lambda: True)
    if torch.backends.mkldnn.is_available():
        assert packed_rows("cpu", torch.bfloat16) == EVERY_ROW
        assert packed_rows("cpu", torch.float32) == (2, 32) and packed_rows("cpu", torch.float32, head=True)[0] == 2
    assert packed_rows("cuda", torch.bfloat16) is None and packed_rows("cpu", torch.float16) is None


@mkldnn
def test_a_layer_packed_for_some_row_counts_keeps_its_weight_for_the_others():
    w = torch.randn(24, 16)
    layer = filled(Linear(16, 24, False, transposed=True))
    layer.load("weight", w)
    layer.pack((2, 8))
    assert layer.weight is not None and layer.packed is not None
    for rows in (1, 2, 8, 9, 100):
        x = torch.randn(rows, 16)
        torch.testing.assert_close(layer(x), x @ w.t(), atol=1e-5, rtol=1e-5)
