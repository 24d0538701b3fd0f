"""Linear layers whose weight layout suits the device: on CPU in fp32 the weight is stored transposed
([in, out]), whose one-token gemv MKL streams ~25% faster than [out, in]; on CPUs that compute bf16
natively (avx512_bf16, AMX) bf16 weights are reordered after loading into oneDNN's blocked layout
(`pack`: 2x faster than [out, in] at 1 to 64 rows); GPUs keep nn.Linear's [out, in].

`PackedLinear` fuses several projections of one input into one matmul (q|k|v, gate|up); checkpoints
store the parts separately and `load` copies part i into its outputs.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from engine.config import cpu_has_native_bf16

PACK_ROWS = 16   # the row count oneDNN's layout is chosen for; any count runs on it


def prefers_transposed(device: torch.device | str, dtype: torch.dtype) -> bool:
    return torch.device(device).type == "cpu" and dtype == torch.float32


def prefers_packed(device: torch.device | str, dtype: torch.dtype) -> bool:
    """oneDNN's blocked layout for every linear: bf16 on CPUs with bf16 instructions."""
    return (torch.device(device).type == "cpu" and dtype == torch.bfloat16 and torch.backends.mkldnn.is_available()
            and cpu_has_native_bf16())


def prefers_packed_head(device: torch.device | str, dtype: torch.dtype) -> bool:
    """The LM head (the largest matmul) packed too in fp32: 1.5x faster from 2 rows on, the same at 1."""
    return prefers_packed(device, dtype) or (torch.device(device).type == "cpu" and dtype == torch.float32
                                             and torch.backends.mkldnn.is_available())


class Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool, transposed: bool = False) -> None:
        super().__init__()
        self.in_features, self.out_features, self.transposed = in_features, out_features, transposed
        shape = (in_features, out_features) if transposed else (out_features, in_features)
        self.weight = nn.Parameter(torch.empty(shape))
        self.bias = nn.Parameter(torch.empty(out_features)) if bias else None
        self.packed: torch.Tensor | None = None   # oneDNN's reordered weight, once `pack` ran

    @classmethod
    def sharing(cls, weight: torch.Tensor) -> Linear:
        """A bias-free layer over an existing [out, in] weight (a tied LM head over the embedding)."""
        layer = cls.__new__(cls)
        nn.Module.__init__(layer)
        layer.in_features, layer.out_features, layer.transposed = weight.shape[1], weight.shape[0], False
        layer.weight, layer.bias, layer.packed = weight, None, None
        return layer

    def pack(self, keep_weight: bool = False) -> None:
        """Reorder the weight into oneDNN's blocked layout (the result equals F.linear's for any row
        count); the plain weight goes unless `keep_weight` (a tied head: the embedding still needs it)."""
        w = self.weight.detach()
        self.packed = torch.ops.mkldnn._reorder_linear_weight(w.t().contiguous() if self.transposed else w,
                                                              PACK_ROWS)
        if not keep_weight:
            self.weight = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [T, in] -> [T, out]
        if self.packed is not None:
            return torch.ops.mkldnn._linear_pointwise(x.contiguous(), self.packed, self.bias, "none", [], "")
        if not self.transposed:
            return F.linear(x, self.weight, self.bias)
        if self.bias is None:
            return x @ self.weight
        return torch.addmm(self.bias, x, self.weight)

    def columns(self, index: int) -> tuple[int, int]:
        """(offset, width) of part `index` among the outputs; a plain Linear is one part."""
        assert index == 0
        return 0, self.out_features

    def load(self, kind: str, w: torch.Tensor, index: int = 0) -> None:
        """Copy a checkpoint tensor (weight [out_i, in] or bias [out_i]) into part `index`."""
        assert self.packed is None, "a packed layer is loaded already"
        offset, width = self.columns(index)
        assert w.shape[0] == width, f"part {index}: {tuple(w.shape)} does not give {width} outputs"
        if kind == "bias":
            assert self.bias is not None and w.dim() == 1
            self.bias.data[offset:offset + width].copy_(w)
            return
        assert kind == "weight" and w.shape[1] == self.in_features, f"{tuple(w.shape)}, in={self.in_features}"
        if self.transposed:
            self.weight.data[:, offset:offset + width].copy_(w.t())
        else:
            self.weight.data[offset:offset + width].copy_(w)


class PackedLinear(Linear):
    def __init__(self, in_features: int, out_sizes: list[int], bias: bool, transposed: bool = False) -> None:
        super().__init__(in_features, sum(out_sizes), bias=bias, transposed=transposed)
        self.out_sizes = list(out_sizes)

    def columns(self, index: int) -> tuple[int, int]:
        return sum(self.out_sizes[:index]), self.out_sizes[index]
