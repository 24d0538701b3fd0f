"""Cost accounting: what an answer cost on the model that gave it, and what a cache hit saved
(what the routed model would have cost), from per-model prices per 1k input and output tokens."""
from __future__ import annotations

from dataclasses import dataclass

from cachegate.backends.base import Usage
from cachegate.settings import Settings


@dataclass(frozen=True)
class Price:
    in_per_1k: float = 0.0
    out_per_1k: float = 0.0

    def cost(self, usage: Usage) -> float:
        return (usage.prompt_tokens * self.in_per_1k + usage.completion_tokens * self.out_per_1k) / 1000


class PriceList:
    def __init__(self, prices: dict[str, Price]) -> None:
        self.prices = prices

    @classmethod
    def from_settings(cls, settings: Settings) -> PriceList:
        return cls({m.name: Price(m.price_in_per_1k, m.price_out_per_1k) for m in settings.models})

    def cost(self, model: str, usage: Usage) -> float:
        return self.prices.get(model, Price()).cost(usage)
