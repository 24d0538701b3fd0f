"""Linear layers whose weight layout suits the device: on CPU in fp32 the weight is stored transposed
([in, out]), whose one-token gemv MKL streams ~25% faster than [out, in]; fp16/bf16 and GPUs keep
nn.Linear's [out, in] (MKL's fp16 path on [in, out] is several times slower).

`PackedLinear` fuses several projections of one input into one matmul (q|k|v, gate|up); checkpoints
store the parts separately and `load` copies part i into its outputs.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def prefers_transposed(device: torch.device | str, dtype: torch.dtype) -> bool:
    return torch.device(device).type == "cpu" and dtype == torch.float32


class Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool, transposed: bool = False) -> None:
        super().__init__()
        self.in_features, self.out_features, self.transposed = in_features, out_features, transposed
        shape = (in_features, out_features) if transposed else (out_features, in_features)
        self.weight = nn.Parameter(torch.empty(shape))
        self.bias = nn.Parameter(torch.empty(out_features)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [T, in] -> [T, out]
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
