"""Linear layers whose weight layout suits the device (measured with all 30 layers' weights of SmolLM2
streamed from memory, as a decode step reads them):

- CPU bf16 on CPUs with bf16 instructions (avx512_bf16, AMX): after loading, each weight is reordered
  into oneDNN's blocked layout (`pack`) and the plain one goes: 1.3x faster at 1 to 512 rows.
- CPU fp32: the weight is stored transposed ([in, out]), which MKL streams fastest for 1 row and for
  prefill chunks, and a oneDNN-packed copy serves 2 to 32 rows (1.35x at 16): twice the weight memory.
- GPUs keep nn.Linear's [out, in].

`PackedLinear` fuses several projections of one input into one matmul (q|k|v, gate|up); checkpoints
store the parts separately and `load` copies part i into its outputs.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from engine.config import cpu_has_native_bf16

PACK_ROWS = 16        # the row count oneDNN's layout is chosen for; any count runs on it
EVERY_ROW = (1, 1 << 62)


def prefers_transposed(device: torch.device | str, dtype: torch.dtype) -> bool:
    return torch.device(device).type == "cpu" and dtype == torch.float32


def packed_rows(device: torch.device | str, dtype: torch.dtype, head: bool = False) -> tuple[int, int] | None:
    """Row counts (lowest, highest) a linear layer runs on oneDNN's packed layout, None for never: every
    count in bf16 on CPUs that compute it natively; 2 to 32 in fp32 (the LM head: from 2 on)."""
    if torch.device(device).type != "cpu" or not torch.backends.mkldnn.is_available():
        return None
    if dtype == torch.bfloat16 and cpu_has_native_bf16():
        return EVERY_ROW
    if dtype == torch.float32:
        return (2, EVERY_ROW[1]) if head else (2, 32)
    return None


@torch.library.custom_op("cachegate::packed_linear", mutates_args=())
def packed_linear(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None, out_features: int) -> torch.Tensor:
    """A packed layer inside a compiled graph, opaque: inductor lowers oneDNN's op only on frozen weights."""
    return torch.ops.mkldnn._linear_pointwise(x.contiguous(), packed, bias, "none", [], "")


@packed_linear.register_fake
def _(x, packed, bias, out_features):
    return x.new_empty(x.shape[0], out_features)


class Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool, transposed: bool = False) -> None:
        super().__init__()
        self.in_features, self.out_features, self.transposed = in_features, out_features, transposed
        shape = (in_features, out_features) if transposed else (out_features, in_features)
        self.weight = nn.Parameter(torch.empty(shape))
        self.bias = nn.Parameter(torch.empty(out_features)) if bias else None
        self.packed: torch.Tensor | None = None   # oneDNN's reordered weight, once `pack` ran
        self.rows = (0, 0)                         # row counts that run on `packed`

    @classmethod
    def sharing(cls, weight: torch.Tensor) -> Linear:
        """A bias-free layer over an existing [out, in] weight (a tied LM head over the embedding)."""
        layer = cls.__new__(cls)
        nn.Module.__init__(layer)
        layer.in_features, layer.out_features, layer.transposed = weight.shape[1], weight.shape[0], False
        layer.weight, layer.bias, layer.packed, layer.rows = weight, None, None, (0, 0)
        return layer

    def pack(self, rows: tuple[int, int] = EVERY_ROW, keep_weight: bool = False) -> None:
        """Reorder the weight into oneDNN's blocked layout (the result equals F.linear's for any row
        count) for inputs of `rows` rows; the weight itself stays for the other counts, or when
        `keep_weight` (a tied head: the embedding still needs it), else it goes."""
        w = self.weight.detach()
        self.packed = torch.ops.mkldnn._reorder_linear_weight(w.t().contiguous() if self.transposed else w,
                                                              PACK_ROWS)
        self.rows = rows
        if rows == EVERY_ROW and not keep_weight:
            self.weight = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [T, in] -> [T, out]
        if self.packed is not None and self.rows[0] <= x.shape[0] <= self.rows[1]:
            if torch.compiler.is_compiling():
                return packed_linear(x, self.packed, self.bias, self.out_features)
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
