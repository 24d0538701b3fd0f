"""Rotary position embedding in HF's "rotate_half" layout, cos/sin computed per step for the step's
positions only. The sine comes with rotate_half's sign folded in ([-sin, sin] over the two halves), so
rotating is one roll: the same products and sums HF computes, in fewer ops.

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
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64, device="cpu").float() / head_dim))
    kind = (scaling or {}).get("rope_type", "default")
    if kind == "default":
        return inv_freq
    if kind == "linear":
        return inv_freq / scaling["factor"]
    if kind == "llama3":
        return llama3_scaled(inv_freq, scaling)
    raise UnsupportedModelError(f"rope scaling {kind!r} is not supported yet")


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    """x: [T, H, D]; cos, signed_sin: [T, 1, D] (`lookup`'s). HF's x * cos + rotate_half(x) * sin, where
    rotate_half(x) * sin == roll(x, D/2) * [-sin, sin] exactly (a negation is exact)."""
    return x * cos + x.roll(x.shape[-1] // 2, -1) * signed_sin


class RotaryEmbedding(nn.Module):
    """cos/sin for the positions of a step, computed in fp32 from the inverse frequencies (the same
    products HF tabulates), then cast to the activation dtype. No table: long contexts cost nothing."""

    def __init__(self, head_dim: int, theta: float, scaling: dict | None) -> None:
        super().__init__()
        self.head_dim, self.theta, self.scaling = head_dim, theta, scaling
        self.inv_freq = inv_frequencies(head_dim, theta, scaling)     # fp32 [head_dim // 2], not a buffer

    def lookup(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """positions: [T] -> (cos, signed sin) each [T, 1, D] in `dtype`, ready to broadcast over heads."""
        if self.inv_freq.device != positions.device:
            self.inv_freq = self.inv_freq.to(positions.device)
        freqs = positions.float()[:, None] * self.inv_freq[None, :]    # [T, D/2]
        angles = torch.cat((freqs, freqs), dim=-1).unsqueeze(1)        # [T, 1, D]
        sin = angles.sin().to(dtype)
        half = sin.shape[-1] // 2
        return angles.cos().to(dtype), torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)
