"""When requests start: open-loop Poisson arrivals at a set rate, or a fixed number of closed-loop users,
both bounded by a duration and a request count (`Limits`); then in-flight work is drained or cancelled."""
from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

Start = Callable[[], Awaitable[None]]


@dataclass
class Limits:
    duration_s: float
    max_requests: int | None = None
    started: float = field(default_factory=time.monotonic)
    issued: int = 0

    def open(self) -> bool:
        in_time = time.monotonic() - self.started < self.duration_s
        return in_time and (self.max_requests is None or self.issued < self.max_requests)

    def take(self) -> bool:
        """Claim one request if the run is still open."""
        if not self.open():
            return False
        self.issued += 1
        return True

    def elapsed(self) -> float:
        return time.monotonic() - self.started


async def open_loop(rate: float, limits: Limits, rng: random.Random, start: Start) -> set[asyncio.Task]:
    """Start a session at each arrival of a Poisson process, whether or not earlier ones have finished."""
    assert rate > 0
    tasks: set[asyncio.Task] = set()
    due = limits.started
    while True:
        due += rng.expovariate(rate)
        if due - limits.started >= limits.duration_s:
            break
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        if not limits.open():
            break
        task = asyncio.create_task(start())
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    return tasks


async def closed_loop(users: int, limits: Limits, start: Start) -> set[asyncio.Task]:
    """`users` clients, each starting its next session as soon as the last one finished."""
    async def user() -> None:
        while limits.open():
            await start()
    tasks = {asyncio.create_task(user()) for _ in range(users)}
    await asyncio.wait(tasks, timeout=max(0.0, limits.duration_s - limits.elapsed()))
    return {t for t in tasks if not t.done()}


async def drain(tasks: set[asyncio.Task], timeout_s: float) -> int:
    """Wait for in-flight work up to `timeout_s`, cancel the rest; returns how many were cancelled."""
    if not tasks:
        return 0
    _, pending = await asyncio.wait(set(tasks), timeout=timeout_s)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return len(pending)
