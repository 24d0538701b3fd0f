"""Plays a workload against the gateway: draws sessions in a reproducible order, sends their turns one
after another (each later turn carries the earlier answers), collects the results, shows progress."""
from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any

import aiohttp
from tqdm import tqdm

from loadtests.loadgen.arrivals import Limits, closed_loop, drain, open_loop
from loadtests.loadgen.client import send
from loadtests.loadgen.result import Result
from loadtests.workloads import Session, Turn, Workload, sessions


@dataclass
class Plan:
    base: str                      # the gateway, loopback only
    model: str = "auto"
    stream: bool = True
    api_key: str | None = None
    rate: float | None = None      # open loop: sessions per second
    users: int | None = None       # closed loop: concurrent users
    duration_s: float = 60.0
    max_requests: int | None = None
    timeout_s: float = 120.0
    drain_s: float = 60.0
    seed: int = 0
    progress: bool = True


@dataclass
class Run:
    results: list[Result]
    wall_s: float
    sessions: int
    multi_turn_sessions: int
    unfinished: int                # requests cancelled at the end of the drain


class Runner:
    def __init__(self, workload: Workload, plan: Plan) -> None:
        self.workload, self.plan = workload, plan
        self.stream = sessions(workload, plan.seed)
        self.results: list[Result] = []
        self.started = self.multi = self.hits = self.errors = 0
        self.bar = tqdm(total=plan.max_requests, unit="req", desc=workload.name, disable=not plan.progress,
                        dynamic_ncols=True)

    async def run(self) -> Run:
        headers = {"authorization": f"Bearer {self.plan.api_key}"} if self.plan.api_key else {}
        timeout = aiohttp.ClientTimeout(total=self.plan.timeout_s)
        async with aiohttp.ClientSession(headers=headers, timeout=timeout,
                                         connector=aiohttp.TCPConnector(limit=1024)) as self.http:
            self.limits = Limits(self.plan.duration_s, self.plan.max_requests)
            if self.plan.users:
                tasks = await closed_loop(self.plan.users, self.limits, self.next_session)
            else:
                rng = random.Random(self.plan.seed + 1)
                tasks = await open_loop(self.plan.rate or 1.0, self.limits, rng, self.next_session)
            await drain(tasks, self.plan.drain_s)
        self.bar.close()
        wall = max([self.limits.elapsed()] + [r.finished_s for r in self.results]) if self.results else 0.0
        unfinished = self.limits.issued - len(self.results)
        return Run(sorted(self.results, key=lambda r: r.started_s), wall, self.started, self.multi, unfinished)

    async def next_session(self) -> None:
        session = next(self.stream)
        self.started += 1
        self.multi += session.multi_turn
        await self.play(session)

    async def play(self, session: Session) -> None:
        history = [{"role": "system", "content": session.system}] if session.system else []
        context = repr((session.endpoint, session.system, sorted(session.params.items())))
        for i, turn in enumerate(session.turns):
            if not self.limits.take():
                return
            context += "\x1f" + turn.text
            result = Result(turn.label, self.limits.elapsed(), follow_up=i > 0, asked=context)
            await send(self.http, self.plan.base, session.endpoint, self.body(session, turn, history), result)
            self.record(result)
            if not result.ok:
                return
            history = history + [{"role": "user", "content": turn.text},
                                 {"role": "assistant", "content": result.text}]

    def body(self, session: Session, turn: Turn, history: list[dict[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.plan.model, **session.params, "stream": self.plan.stream}
        if self.plan.stream:
            body["stream_options"] = {"include_usage": True}
        if session.endpoint == "chat":
            body["messages"] = history + [{"role": "user", "content": turn.text}]
        else:
            body["prompt"] = turn.text
        return body

    def record(self, result: Result) -> None:
        self.results.append(result)
        self.hits += result.hit
        self.errors += not result.ok
        done = len(self.results)
        self.bar.set_postfix(rate=f"{done / max(self.limits.elapsed(), 1e-9):.2f}/s",
                             hits=f"{self.hits / done:.0%}", errors=self.errors, refresh=False)
        self.bar.update()


def play(workload: Workload, plan: Plan) -> Run:
    return asyncio.run(Runner(workload, plan).run())
