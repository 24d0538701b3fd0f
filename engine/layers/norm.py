"""RMSNorm computed in fp32 whatever the activation dtype (as HF does): Llama's scales by the learned
weight after casting back; Gemma's scales by (1 + weight) before casting back."""
from __future__ import annotations

import torch
from torch import nn


def rms(x32: torch.Tensor, eps: float) -> torch.Tensor:
    return x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [..., dim]
        return self.weight * rms(x.float(), self.eps).to(x.dtype)


class GemmaRMSNorm(RMSNorm):
    """Weights are stored as offsets from 1 (HF's convention; GGUF files store 1 + w)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (rms(x.float(), self.eps) * (1.0 + self.weight.float())).to(x.dtype)
