"""Telemetry of requests: one `RequestRecord` per request, finished exactly once, feeding the
Prometheus metrics, the per-minute series, the in-process counters and the entry ledger. What the pipeline did
is read from its `Outcome` (where the answer came from, the route, what the tiers kept of a fresh answer): the
pipeline itself meters nothing."""
from __future__ import annotations

import asyncio
import time
from collections import Counter as CounterT
from dataclasses import dataclass, field

from cachegate.backends.base import BackendRequest, Chunk, Usage
from cachegate.pipeline import Outcome
from cachegate.telemetry.accounting import PriceList
from cachegate.telemetry.histogram import bucket_of
from cachegate.telemetry.ledger import Ledger, LedgerEntry
from cachegate.telemetry.metrics import Metrics
from cachegate.telemetry.series import MinuteSeries, RedisSeries
from cachegate.telemetry.stats import SAVED, Stats


@dataclass
class RequestRecord:
    endpoint: str
    started: float = field(default_factory=time.perf_counter)
    cache: str = "error"
    tier: str = "-"
    model: str = ""
    route: str = ""
    question: str = ""
    similarity: float | None = None
    first_token_s: float | None = None
    usage: Usage | None = None
    status: int = 200
    done: bool = False
    outcome: Outcome | None = None


class Telemetry:
    def __init__(self, stats: Stats, prices: PriceList, series: MinuteSeries, ledger: Ledger,
                 fleet: RedisSeries | None = None) -> None:
        self.stats = stats
        self.prices = prices
        self.series = series
        self.ledger = ledger
        self.fleet = fleet          # the fleet's minute buckets in Redis, when configured
        self.metrics = Metrics()
        self._flusher: asyncio.Task | None = None
        self.routing_reference: str | None = None    # the large tier's model: what "auto" saves against

    def start_flushing(self, interval_s: float) -> None:
        if self.fleet is not None:
            self._flusher = asyncio.create_task(self.fleet.run(interval_s))

    async def close(self) -> None:
        if self._flusher is not None:
            self._flusher.cancel()
            await self.fleet.flush()           # its client is the services' to close

    async def window(self) -> list[tuple[int, CounterT]]:
        return await self.fleet.window() if self.fleet is not None else self.series.window()

    def start(self, endpoint: str) -> RequestRecord:
        return RequestRecord(endpoint)

    def routed(self, rec: RequestRecord, outcome: Outcome, request: BackendRequest) -> None:
        """The pipeline has decided: where the answer comes from, and which model it stands for."""
        rec.outcome = outcome
        route = outcome.route
        rec.cache, rec.tier, rec.route = outcome.cache, route.tier, route.header()
        rec.model = route.answered_by or route.model
        rec.question = request.question
        rec.similarity = outcome.similarity
        if outcome.cache == "hit-exact":
            self.ledger.hit(outcome.key)
        elif outcome.cache in ("hit-semantic", "hit-curated"):
            self.ledger.hit(outcome.entry_id or "", outcome.similarity)
            self.metrics.similarity.observe(outcome.similarity or 0.0)
        elif outcome.cache in ("miss", "bypass"):         # a backend call of its own (a joined one shares it)
            self.stats.count_route(route.tier, route.answered_by or route.model, route.fell_back)

    def note(self, rec: RequestRecord, chunk: Chunk) -> None:
        """One chunk of the answer on its way out: the first token's time, the usage."""
        if rec.first_token_s is None and (chunk.text or chunk.finish_reason):
            rec.first_token_s = time.perf_counter() - rec.started
        if chunk.usage is not None:
            rec.usage = chunk.usage

    def finish(self, rec: RequestRecord, status: int | None = None) -> None:
        if rec.done:
            return
        rec.done = True
        if status is not None:
            rec.status = status
        if rec.outcome is not None:
            self._kept(rec.outcome)
        total_s = time.perf_counter() - rec.started
        m = self.metrics
        m.bound(m.requests, rec.endpoint, rec.cache, rec.tier, str(rec.status)).inc()
        self.stats.count(rec.endpoint, rec.cache, rec.status)
        fields: dict[str, float] = {f"req:{rec.cache}": 1}
        if rec.status == 200:
            m.bound(m.duration, rec.endpoint, rec.cache).observe(total_s)
            fields[f"lat:{rec.cache}:{bucket_of(total_s * 1000)}"] = 1
            fields[f"route:{rec.tier}"] = 1
            if rec.first_token_s is not None:
                m.bound(m.ttft, rec.endpoint, rec.cache).observe(rec.first_token_s)
                fields[f"ttft:{rec.cache}:{bucket_of(rec.first_token_s * 1000)}"] = 1
            fields |= self._account(rec)
            if rec.cache in ("miss", "bypass"):
                self.ledger.missed(rec.question, rec.model, total_s * 1000, rec.route)
                m.routes.labels(rec.tier, rec.model, str("fallback-from" in rec.route).lower()).inc()
        self.series.add(fields)

    def _kept(self, outcome: Outcome) -> None:
        """What the tiers kept of a fresh answer goes into the ledger; a store that failed is counted."""
        for s in outcome.receipt.stored:
            self.ledger.stored(LedgerEntry(s.tier, s.id, s.tenant, s.namespace, s.model, s.question, s.text))
            self.stats.stored += s.tier == "exact"
        self.stats.store_errors += outcome.receipt.failed

    def _account(self, rec: RequestRecord) -> dict[str, float]:
        if rec.usage is None:
            return {}
        cost = self.prices.cost(rec.model, rec.usage)
        self.stats.account(rec.cache, rec.model, rec.usage, cost)
        kind = "saved" if rec.cache in SAVED else "served"
        m = self.metrics
        m.bound(m.tokens, kind, rec.model).inc(rec.usage.total_tokens)
        m.bound(m.cost, "saved" if kind == "saved" else "spent", rec.model).inc(cost)
        if kind == "saved":
            return {"tokens_saved": rec.usage.total_tokens, "cost_saved": cost}
        return {"tokens_served": rec.usage.total_tokens, "cost": cost} | self._routing_saved(rec, cost)

    def _routing_saved(self, rec: RequestRecord, cost: float) -> dict[str, float]:
        """An answer the router ("auto") sent to a cheaper model: what the large tier's model would have
        cost for the same tokens, less what it cost (an estimate: token counts differ between models)."""
        if self.routing_reference is None or not rec.route.startswith("auto:") or rec.tier == "large" \
                or "fallback-from" in rec.route:
            return {}
        saved = max(0.0, self.prices.cost(self.routing_reference, rec.usage) - cost)
        self.metrics.bound(self.metrics.routing_saved, rec.model).inc(saved)
        return {"routing_saved": saved}
