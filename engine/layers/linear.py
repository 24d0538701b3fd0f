"""`PackedLinear`: several projections of one input fused into a single matmul (q|k|v, gate|up).

Checkpoints store the parts separately; `load_shard` copies part i into its rows.
"""
from __future__ import annotations

import torch
from torch import nn


class PackedLinear(nn.Linear):
    def __init__(self, in_features: int, out_sizes: list[int], bias: bool) -> None:
        super().__init__(in_features, sum(out_sizes), bias=bias)
        self.out_sizes = list(out_sizes)

    def load_shard(self, param_name: str, index: int, w: torch.Tensor) -> None:
        """Copy part `index` (weight [out_i, in] or bias [out_i]) into its rows of weight / bias."""
        param = getattr(self, param_name)
        assert w.shape[0] == self.out_sizes[index], f"shard {index}: {tuple(w.shape)} vs {self.out_sizes}"
        assert w.shape[1:] == param.shape[1:], f"shard {index}: {tuple(w.shape)} vs {tuple(param.shape)}"
        param.data.narrow(0, sum(self.out_sizes[:index]), w.shape[0]).copy_(w)
