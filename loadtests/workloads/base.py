"""What every workload hands the load generator: sessions of turns, each turn labelled with the intent
whose answer is right for it, so a cache hit serving another intent's answer can be counted as false."""
from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Turn:
    text: str       # the user message (chat) or the whole prompt (completions)
    label: str      # the intent this turn asks about; a follow-up's label holds its conversation's intent


@dataclass(frozen=True)
class Session:
    """Turns sent one after another on one conversation; each later turn sees the earlier answers."""
    turns: tuple[Turn, ...]
    endpoint: str = "chat"                  # "chat" | "completions"
    system: str | None = None
    params: dict[str, Any] = field(default_factory=dict)   # sent as they are: max_tokens, temperature...

    @property
    def multi_turn(self) -> bool:
        return len(self.turns) > 1


class Workload(Protocol):
    name: str
    budget_ms: float | None          # a per-request latency budget whose share is reported, if any
    reference: dict[str, Any]        # published figures printed beside the results

    def session(self, rng: random.Random) -> Session: ...


def sessions(workload: Workload, seed: int) -> Iterator[Session]:
    """The workload's endless, reproducible stream of sessions for one seed."""
    rng = random.Random(seed)
    while True:
        yield workload.session(rng)
