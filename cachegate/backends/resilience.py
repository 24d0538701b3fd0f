"""Resilience around one backend: retries with exponential backoff and jitter, and a circuit breaker.

Retries happen only before the first chunk has been passed on (after that the client has bytes and a
second answer would corrupt it). The breaker opens after `failure_threshold` consecutive failures,
refuses at once while open, and lets one probe through after `reset_after_s` before closing again.
"""
from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from cachegate.backends.base import Backend, BackendRequest, Chunk
from cachegate.backends.streams import first_answer
from cachegate.errors import BackendError, BackendOverloaded, BackendUnavailable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3              # tries in all, the first included
    base_delay_s: float = 0.1
    max_delay_s: float = 2.0
    jitter: float = 0.5            # ± fraction of the delay, so clients do not retry in lockstep

    def delay(self, attempt: int, retry_after_s: float | None = None, rng: random.Random = random) -> float:
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** attempt)
        backoff *= 1 + self.jitter * (2 * rng.random() - 1)
        return max(backoff, min(retry_after_s or 0.0, self.max_delay_s))


class CircuitBreaker:
    CLOSED, OPEN, HALF_OPEN = "closed", "open", "half-open"

    def __init__(self, failure_threshold: int = 5, reset_after_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.failure_threshold = failure_threshold
        self.reset_after_s = reset_after_s
        self.clock = clock
        self.state = self.CLOSED
        self.failures = 0
        self.opened_at = 0.0
        self.probing = False

    def allow(self) -> bool:
        if self.state == self.OPEN and self.clock() - self.opened_at >= self.reset_after_s:
            self.state = self.HALF_OPEN
        if self.state == self.HALF_OPEN:
            if self.probing:
                return False
            self.probing = True
        return self.state != self.OPEN

    def record_success(self) -> None:
        self.state, self.failures, self.probing = self.CLOSED, 0, False

    def record_failure(self) -> None:
        self.failures += 1
        self.probing = False
        if self.state == self.HALF_OPEN or self.failures >= self.failure_threshold:
            if self.state != self.OPEN:
                log.warning("circuit opened after %d failures", self.failures)
            self.state, self.opened_at = self.OPEN, self.clock()


class ResilientBackend:
    """One backend behind retries and a breaker; counts requests in flight for the balancer."""

    def __init__(self, backend: Backend, retry: RetryPolicy = RetryPolicy(),
                 breaker: CircuitBreaker | None = None, sleep=asyncio.sleep) -> None:
        self.backend = backend
        self.info = backend.info
        self.retry = retry
        self.breaker = breaker or CircuitBreaker()
        self.sleep = sleep
        self.outstanding = 0
        self.retries = 0

    def __repr__(self) -> str:
        return f"Resilient({self.backend!r})"

    @property
    def available(self) -> bool:
        return self.breaker.state != CircuitBreaker.OPEN or \
            self.breaker.clock() - self.breaker.opened_at >= self.breaker.reset_after_s

    async def start(self) -> None:
        await self.backend.start()

    async def close(self) -> None:
        await self.backend.close()

    async def generate(self, request: BackendRequest) -> AsyncIterator[Chunk]:
        self.outstanding += 1
        try:
            chunks = await self._first_answer(request)
            try:
                async for chunk in chunks:
                    yield chunk
            except BackendError:
                self.breaker.record_failure()
                raise
        finally:
            self.outstanding -= 1

    async def _first_answer(self, request: BackendRequest) -> AsyncIterator[Chunk]:
        for attempt in range(self.retry.attempts):
            if not self.breaker.allow():
                raise BackendUnavailable(f"{self.info.name}: circuit open, backend skipped")
            try:
                chunks = await first_answer(self.backend.generate(request),
                                            lambda: BackendUnavailable(f"{self.info.name}: empty answer"))
                self.breaker.record_success()      # it answered: alive, whatever happens later
                return chunks
            except BackendOverloaded:
                raise                                # busy, not broken: no retry here, no breaker failure
            except BackendError as exc:
                if not exc.retryable:
                    self.breaker.record_success()   # it answered: the backend is alive
                    raise
                error = exc
            self.breaker.record_failure()
            if attempt + 1 < self.retry.attempts:
                self.retries += 1
                await self.sleep(self.retry.delay(attempt, error.retry_after_s))
        raise error
