"""Shadow checks: a share of semantic hits is asked again of the backend in the background, after the
client has its answer, and the fresh answer is compared with the served one. Bounded by a budget of
calls per minute, and skipped while the backends are busy, so checking never costs a client anything."""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable

import numpy as np

from cachegate.backends.base import Backend, BackendRequest
from cachegate.routing.fallback import generate_with_fallback
from cachegate.routing.router import Route

log = logging.getLogger(__name__)


class AnswerComparator:
    """Two answers agree when they are the same text, or their embeddings are at least `threshold` close."""

    def __init__(self, embed: Callable[[list[str]], Awaitable[np.ndarray]], threshold: float = 0.85) -> None:
        self.embed = embed
        self.threshold = threshold

    async def agree(self, served: str, fresh: str) -> bool:
        if " ".join(served.split()) == " ".join(fresh.split()):
            return True
        a, b = await self.embed([served, fresh])
        return float(np.dot(a, b)) >= self.threshold


class Budget:
    """At most `per_minute` calls in any sliding minute."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self.calls: deque[float] = deque()

    def take(self) -> bool:
        now = self.clock()
        while self.calls and now - self.calls[0] >= 60:
            self.calls.popleft()
        if len(self.calls) >= self.per_minute:
            return False
        self.calls.append(now)
        return True


def outstanding(backend: Backend) -> int:
    """Requests in flight on a model's replicas, and waiting in an in-process engine's queue."""
    replicas = getattr(backend, "replicas", [backend])
    busy = sum(getattr(r, "outstanding", 0) for r in replicas)
    for r in replicas:
        inner = getattr(r, "backend", r)
        if hasattr(inner, "engine_stats"):
            busy += inner.engine_stats().get("waiting", 0)
    return busy


class ShadowChecks:
    def __init__(self, backends: dict[str, Backend], compare: AnswerComparator, rate: float = 0.02,
                 rates: dict[str, float] | None = None, per_minute: int = 30, busy_at: int = 4,
                 rng: random.Random | None = None) -> None:
        self.backends = backends
        self.compare = compare
        self.rate = rate
        self.rates = rates or {}
        self.budget = Budget(per_minute)
        self.busy_at = busy_at
        self.rng = rng or random.Random()
        self.counts = {"sampled": 0, "over_budget": 0, "busy": 0, "checked": 0, "failed": 0}
        self.tasks: set[asyncio.Task] = set()

    def maybe(self, namespace: str, route: Route, request: BackendRequest, served: str,
              on_verdict: Callable[[bool], None]) -> bool:
        """Sample this hit for a check; True when a background re-ask was started."""
        if self.rng.random() >= self.rates.get(namespace, self.rate):
            return False
        self.counts["sampled"] += 1
        if sum(outstanding(self.backends[m]) for m in route.chain if m in self.backends) >= self.busy_at:
            self.counts["busy"] += 1
            return False
        if not self.budget.take():
            self.counts["over_budget"] += 1
            return False
        task = asyncio.create_task(self._check(route, request, served, on_verdict))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return True

    async def _check(self, route: Route, request: BackendRequest, served: str,
                     on_verdict: Callable[[bool], None]) -> None:
        route = dataclasses.replace(route, answered_by=None)
        request = dataclasses.replace(request, request_id=request.request_id + "-shadow")
        try:
            fresh = "".join([c.text async for c in generate_with_fallback(self.backends, route, request)])
        except Exception as exc:  # noqa: BLE001 - a failed re-ask is no verdict
            self.counts["failed"] += 1
            log.info("shadow check of a semantic hit failed: %s", exc)
            return
        if route.fell_back:                  # another model's answer says nothing about this one
            return
        self.counts["checked"] += 1
        on_verdict(await self.compare.agree(served, fresh))

    async def drain(self) -> None:
        await asyncio.gather(*self.tasks, return_exceptions=True)

    def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
