"""The request path of the gateway, free of HTTP: exact tier → semantic tier → single-flight →
backend (the route's fallback chain) → admission → store in both tiers.

`Gateway.serve` returns an `Outcome` whose chunks replay a cached answer or stream a fresh one; a
fresh answer is offered to the caches once it has finished, before its last chunk reaches the client.
"""
from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from cachegate.backends.base import Backend, BackendRequest, Chunk, Usage
from cachegate.backends.fallback import generate_with_fallback
from cachegate.backends.streams import prepend
from cachegate.cache.answer import CachedAnswer
from cachegate.cache.controls import DEFAULT_NAMESPACE, CacheControls
from cachegate.cache.exact import ExactTier
from cachegate.cache.keys import exact_key
from cachegate.errors import BackendUnavailable
from cachegate.routing import ModelRouter, Route, route_input
from cachegate.semantic.entry import id_text
from cachegate.semantic.singleflight import SingleFlight
from cachegate.semantic.tier import Lookup, SemanticTier
from cachegate.stats import Stats
from cachegate.telemetry.ledger import Ledger, LedgerEntry
from cachegate.telemetry.recorder import question_of
from policies.admission import AdmissionPolicy
from policies.routing import FixedRouter

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    cache: str          # "hit-exact" | "hit-semantic" | "miss" | "bypass" (lookup skipped by the request)
    key: str
    route: Route
    chunks: AsyncIterator[Chunk]
    similarity: float | None = None   # hit-semantic: cosine of the two questions
    entry_id: str | None = None       # hit-semantic: the entry served
    shared: bool = False              # joined an identical request's backend call


class Gateway:
    def __init__(self, backends: dict[str, Backend], exact: ExactTier | None,
                 admission: AdmissionPolicy, stats: Stats, semantic: SemanticTier | None = None,
                 flights: SingleFlight | None = None, router: ModelRouter | None = None,
                 ledger: Ledger | None = None) -> None:
        self.backends = backends
        self.exact = exact
        self.admission = admission
        self.stats = stats
        self.semantic = semantic
        self.flights = flights
        self.router = router or ModelRouter({"small": list(backends)}, FixedRouter())
        self.ledger = ledger or Ledger()

    async def route(self, endpoint: str, request: BackendRequest) -> tuple[Route, BackendRequest]:
        """Resolve the client's `model` (auto, a tier, a model) and bind the request to the routed model."""
        route = await self.router.resolve(request.model, route_input(endpoint, request))
        params = request.params
        if not request.max_tokens_explicit:
            params = dataclasses.replace(params, max_tokens=self.backends[route.model].info.default_max_tokens)
        return route, dataclasses.replace(request, model=route.model, params=params)

    async def serve(self, endpoint: str, request: BackendRequest,
                    controls: CacheControls | None = None) -> Outcome:
        """Serve `request` as the client sent it: routed, looked up, answered, stored, metered."""
        controls = controls or CacheControls()
        route, request = await self.route(endpoint, request)
        key = cache_key(endpoint, request, controls.namespace)
        lookup: Lookup | None = None
        if controls.lookup:
            answer = await self._exact_hit(request.tenant, controls, key)
            if answer is not None:
                return Outcome("hit-exact", key, route, replay(answer))
            if self.semantic is not None:
                lookup = await self.semantic.lookup(endpoint, request, controls.namespace, controls.max_age_s)
                if lookup is not None and lookup.hit is not None:
                    hit = lookup.hit
                    return Outcome("hit-semantic", key, route, replay(hit.entry.answer),
                                   similarity=round(hit.similarity, 4), entry_id=id_text(hit.entry.id))
        store = Storer(self, endpoint, request, key, controls, lookup, route)
        chunks, shared = self._call(route, request, key, controls, store)
        try:
            first = await anext(chunks)
        except StopAsyncIteration:
            raise BackendUnavailable(f"the backend of '{request.model}' returned no answer") from None
        self.stats.count_route(route.tier, route.answered_by or route.model, route.fell_back)
        cache = "miss" if controls.lookup else "bypass"
        return Outcome(cache, key, route, prepend(first, chunks), shared=shared)

    def _call(self, route: Route, request: BackendRequest, key: str, controls: CacheControls,
              store: Storer) -> tuple[AsyncIterator[Chunk], bool]:
        if self.flights is None or not controls.shareable:
            return record(generate_with_fallback(self.backends, route, request), store), False
        flight = self.flights.join(key)
        if flight is not None:
            return flight.subscribe(), True
        generate = generate_with_fallback(self.backends, route, request)
        return self.flights.lead(key, generate, store.on_chunk).subscribe(), False

    async def _exact_hit(self, tenant: str, controls: CacheControls, key: str) -> CachedAnswer | None:
        if self.exact is None:
            return None
        answer = await self.exact.lookup(tenant, controls.namespace, key)
        if answer is not None and controls.max_age_s is not None and time.time() - answer.created > controls.max_age_s:
            return None
        return answer


@dataclass
class Storer:
    """Offers a finished answer to both tiers, once, before its last chunk is passed on."""
    gateway: Gateway
    endpoint: str
    request: BackendRequest
    key: str
    controls: CacheControls
    lookup: Lookup | None
    route: Route

    async def on_chunk(self, chunk: Chunk, earlier: list[Chunk]) -> None:
        if chunk.finish_reason:
            await self.admit("".join(c.text for c in earlier) + chunk.text, chunk)

    async def admit(self, text: str, last: Chunk) -> None:
        g, controls = self.gateway, self.controls
        if controls.no_store or self.route.fell_back:     # a degraded answer is served, never kept
            return
        answer = CachedAnswer(text=text, finish_reason=last.finish_reason or "stop", model=self.request.model,
                              usage=last.usage or Usage())
        request, question = self.request, question_of(self.request)
        if g.exact is not None and g.admission.admits(text, last.finish_reason, "exact"):
            ttl = g.admission.ttl_for(controls.ttl_s, controls.namespace)
            await g.exact.put(request.tenant, controls.namespace, self.key, answer, ttl)
            g.stats.stored += 1
            g.ledger.stored(LedgerEntry("exact", self.key, request.tenant, controls.namespace, request.model,
                                        question, text))
        if g.semantic is not None and g.admission.admits(text, last.finish_reason, "semantic"):
            lookup = self.lookup or await self._prepare()
            if lookup is not None:
                ttl = g.admission.ttl_for(controls.ttl_s, controls.namespace, g.semantic.cfg.ttl_s)
                entry = await g.semantic.put(lookup, answer, ttl)
                if entry is not None:
                    g.ledger.stored(LedgerEntry("semantic", id_text(entry.id), request.tenant, controls.namespace,
                                                request.model, question, text))

    async def _prepare(self) -> Lookup | None:
        try:
            return await self.gateway.semantic.prepare(self.endpoint, self.request, self.controls.namespace)
        except Exception:
            log.exception("could not embed a request for the semantic tier")
            return None


def cache_key(endpoint: str, request: BackendRequest, namespace: str) -> str:
    key = exact_key(endpoint, request)
    if namespace == DEFAULT_NAMESPACE:
        return key
    return hashlib.sha256(f"{namespace}\x00{key}".encode()).hexdigest()


async def record(chunks: AsyncIterator[Chunk], store: Storer) -> AsyncIterator[Chunk]:
    """Pass the stream through, and store the whole answer when it finishes (and is admitted)."""
    seen: list[Chunk] = []
    try:
        async for chunk in chunks:
            await store.on_chunk(chunk, seen)
            seen.append(chunk)
            yield chunk
    finally:
        await chunks.aclose()


async def replay(answer: CachedAnswer) -> AsyncIterator[Chunk]:
    yield Chunk(text=answer.text, finish_reason=answer.finish_reason, usage=answer.usage)
