"""Choosing the next token from logits: greedy, temperature, top-k, top-p (nucleus).

Random draws go through the request's own `torch.Generator`, so a seeded request repeats exactly
and concurrent requests never share random state.
"""
from __future__ import annotations

import os

import torch

from engine.sampling_params import SamplingParams


def make_generator(params: SamplingParams, device: torch.device | str = "cpu") -> torch.Generator | None:
    """A generator seeded with `params.seed` (or fresh entropy); None for greedy requests."""
    if params.greedy:
        return None
    seed = params.seed if params.seed is not None else int.from_bytes(os.urandom(8), "little") >> 1
    return torch.Generator(device=device).manual_seed(seed)


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """logits: [V]; everything below the k-th largest becomes -inf (k <= 0 keeps all)."""
    if k <= 0 or k >= logits.shape[-1]:
        return logits
    kth = torch.topk(logits, k).values[-1]
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """logits: [V]; keep the smallest set of most likely tokens whose probability mass reaches p."""
    if p >= 1.0:
        return logits
    probs, order = torch.sort(torch.softmax(logits, dim=-1), descending=True)
    mass_before = torch.cumsum(probs, dim=-1) - probs
    drop_sorted = mass_before >= p                      # the top token always has mass_before 0 < p
    drop = torch.zeros_like(drop_sorted).scatter(0, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def sample(logits: torch.Tensor, params: SamplingParams, generator: torch.Generator | None) -> int:
    """logits: [V] fp32 -> the chosen token id."""
    assert logits.dim() == 1
    if params.greedy:
        return int(torch.argmax(logits))
    logits = logits / params.temperature
    logits = top_p_filter(top_k_filter(logits, params.top_k), params.top_p)
    probs = torch.softmax(logits, dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator))
