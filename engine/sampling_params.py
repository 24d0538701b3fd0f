"""Sampling parameters of one request: the plain data the engine's sampler and stop checks read.

Mirrors vLLM's `SamplingParams` so people know it; the gateway builds one from an OpenAI request.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SamplingParams:
    max_tokens: int = 256
    temperature: float = 1.0      # 0 means greedy
    top_p: float = 1.0            # nucleus mass kept, in (0, 1]
    top_k: int = 0                # 0 or -1 keeps every token
    seed: int | None = None       # per-request generator, so a seeded request repeats exactly
    stop: list[str] = field(default_factory=list)
    ignore_eos: bool = False

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")
        if not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")
        if self.top_k < -1:
            raise ValueError("top_k must be -1, 0 or positive")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0 or self.top_k == 1
