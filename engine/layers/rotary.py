"""Rotary position embedding in HF's "rotate_half" layout, with cos/sin tables precomputed once
for every position up to the model's context (no per-step trigonometry).

Supports the plain theta schedule and the "linear" and "llama3" frequency scalings.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from engine.errors import UnsupportedModelError


def llama3_scaled(inv_freq: torch.Tensor, scaling: dict) -> torch.Tensor:
    """Llama 3.1 schedule: long wavelengths slowed by `factor`, short ones kept, a smooth ramp between."""
    factor = scaling["factor"]
    low, high = scaling.get("low_freq_factor", 1.0), scaling.get("high_freq_factor", 4.0)
    original = scaling["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv_freq
    slow = torch.where(wavelen > original / low, inv_freq / factor, inv_freq)
    ramp = (original / wavelen - low) / (high - low)
    blended = (1 - ramp) * slow / factor + ramp * slow
    middle = (wavelen >= original / high) & (wavelen <= original / low)
    return torch.where(middle, blended, slow)


def inv_frequencies(head_dim: int, theta: float, scaling: dict | None) -> torch.Tensor:  # [head_dim // 2]
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    kind = (scaling or {}).get("rope_type", "default")
    if kind == "default":
        return inv_freq
    if kind == "linear":
        return inv_freq / scaling["factor"]
    if kind == "llama3":
        return llama3_scaled(inv_freq, scaling)
    raise UnsupportedModelError(f"rope scaling {kind!r} is not supported yet")


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x: [T, H, D]; cos, sin: [T, 1, D]."""
    return x * cos + rotate_half(x) * sin


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim: int, max_positions: int, theta: float, scaling: dict | None) -> None:
        super().__init__()
        self.head_dim, self.max_positions, self.theta, self.scaling = head_dim, max_positions, theta, scaling
        self.register_buffer("cos", torch.empty(max_positions, head_dim), persistent=False)
        self.register_buffer("sin", torch.empty(max_positions, head_dim), persistent=False)
        self.reset_tables()

    def reset_tables(self) -> None:
        """(Re)compute cos/sin [max_positions, head_dim] in fp32, stored in the buffers' dtype and device."""
        if self.cos.is_meta:
            return
        inv_freq = inv_frequencies(self.head_dim, self.theta, self.scaling)
        t = torch.arange(self.max_positions, dtype=torch.float32)
        freqs = torch.outer(t, inv_freq)                      # [P, D/2]
        angles = torch.cat((freqs, freqs), dim=-1)            # [P, D]
        self.cos.copy_(angles.cos())
        self.sin.copy_(angles.sin())

    def lookup(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """positions: [T] -> (cos, sin) each [T, 1, D], ready to broadcast over heads."""
        return self.cos[positions].unsqueeze(1), self.sin[positions].unsqueeze(1)
