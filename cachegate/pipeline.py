"""The request path of the gateway, free of HTTP: exact tier → semantic tier → single-flight →
backend (the route's fallback chain) → admission → store in both tiers.

`Gateway.serve` returns an `Outcome` whose chunks replay a cached answer or stream a fresh one; a
fresh answer is offered to the caches once it has finished, before its last chunk reaches the client.
A cached answer serves a request when it fits the request's `max_tokens` (cut to it when longer);
storing never fails a request: a store that errs is logged, noted on the outcome, and the answer still served.
The pipeline meters nothing itself: `cachegate.telemetry` reads what happened from the `Outcome`.
"""
from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from cachegate.backends.base import Backend, BackendRequest, Chunk
from cachegate.backends.streams import first_answer
from cachegate.cache.answer import AnswerBuilder, CachedAnswer, word_pieces
from cachegate.cache.controls import DEFAULT_NAMESPACE, CacheControls
from cachegate.cache.curated.library import CuratedLibrary
from cachegate.cache.exact import ExactTier
from cachegate.cache.keys import exact_key
from cachegate.cache.semantic.entry import id_text
from cachegate.cache.semantic.tier import Lookup, SemanticTier
from cachegate.cache.singleflight import SingleFlight
from cachegate.distill.log import AnswerLog
from cachegate.errors import BackendUnavailable
from cachegate.routing.fallback import generate_with_fallback
from cachegate.routing.router import ModelRouter, Route
from policies.admission import AdmissionPolicy
from policies.routing import FixedRouter

log = logging.getLogger(__name__)
OUTCOMES = ("hit-exact", "hit-curated", "hit-semantic", "joined", "miss", "bypass")     # x-cachegate-cache


@dataclass
class Stored:
    """An answer a tier kept, as the entry ledger lists it."""
    tier: str           # "exact" | "semantic"
    id: str             # the exact key, or the semantic entry's id
    tenant: str
    namespace: str
    model: str
    question: str
    text: str


@dataclass
class Receipt:
    """What storing a fresh answer did, filled in once the answer has finished."""
    stored: list[Stored] = field(default_factory=list)
    failed: bool = False        # a store erred: the answer was served uncached


@dataclass
class Outcome:
    cache: str          # "hit-exact" | "hit-curated" | "hit-semantic" | "miss" | "joined" (shared an identical
    key: str            #   request's backend call) | "bypass" (lookup skipped by the request or the settings)
    route: Route
    chunks: AsyncIterator[Chunk]
    similarity: float | None = None   # hit-semantic, hit-curated: cosine of the two questions, in [-1, 1]
    entry_id: str | None = None       # hit-semantic: the entry served; hit-curated: the curated answer's id
    answer: CachedAnswer | None = None   # a hit: the answer `chunks` replays, fitted to the request
    matched: str | None = None        # hit-semantic, hit-curated: the question whose answer was served
    receipt: Receipt = field(default_factory=Receipt)    # a miss: what the tiers kept of its answer

    @property
    def shared(self) -> bool:
        return self.cache == "joined"


@dataclass(frozen=True)
class CachePolicy:
    """How the gateway treats sampled requests and replays cached answers (settings `cache.*`)."""
    sampled: str = "store"          # "store": a sampled answer is cached and replayed | "skip": never cached
    pacing: str = "none"            # replayed streams: "none" (at once) | "original" (the backend's timing)

    def skips(self, request: BackendRequest) -> bool:
        p = request.params
        return self.sampled == "skip" and not p.greedy and p.seed is None


class Gateway:
    def __init__(self, backends: dict[str, Backend], exact: ExactTier | None,
                 admission: AdmissionPolicy, semantic: SemanticTier | None = None,
                 flights: SingleFlight | None = None, router: ModelRouter | None = None,
                 policy: CachePolicy = CachePolicy(),
                 answer_log: AnswerLog | None = None, curated: CuratedLibrary | None = None) -> None:
        self.backends = backends
        self.exact = exact
        self.admission = admission
        self.semantic = semantic
        self.flights = flights
        self.router = router or ModelRouter({"small": list(backends)}, FixedRouter())
        self.policy = policy
        self.curated = curated
        self.answer_log = answer_log      # distillation: the large tier's answers (cachegate.distill)

    async def route(self, endpoint: str, request: BackendRequest) -> tuple[Route, BackendRequest]:
        """Resolve the client's `model` (auto, a tier, a model) and bind the request to the routed model."""
        route = await self.router.resolve(endpoint, request)
        params = request.params
        if not request.max_tokens_explicit:
            params = dataclasses.replace(params, max_tokens=self.backends[route.model].info.default_max_tokens)
        return route, dataclasses.replace(request, model=route.model, params=params)

    async def serve(self, endpoint: str, request: BackendRequest, controls: CacheControls | None = None,
                    stream: bool = True) -> Outcome:
        """Serve `request` as the client sent it: routed, looked up, answered, stored. `stream`:
        whether the client reads a stream (a cached answer then replays piece by piece, else whole)."""
        controls = controls or CacheControls()
        route, request = await self.route(endpoint, request)
        if self.policy.skips(request):
            controls = dataclasses.replace(controls, no_cache=True, no_store=True)
        key = cache_key(endpoint, request, controls.namespace)
        lookup: Lookup | None = None
        if controls.lookup:
            answer = await self._exact_hit(request, controls, key)
            if answer is not None:
                return Outcome("hit-exact", key, route, replay(answer, self.policy.pacing, whole=not stream),
                               answer=answer)
            if self.semantic is not None:
                lookup = await self.semantic.lookup(endpoint, request, controls.namespace, controls.max_age_s)
                found = await self._curated_hit(lookup, route, request, key, stream)
                if found is not None:
                    return found
                hit = lookup.hit if lookup is not None else None
                answer = hit.entry.answer.fit(request.params.max_tokens, cuttable(request)) if hit else None
                if answer is not None:
                    return Outcome("hit-semantic", key, route, replay(answer, self.policy.pacing, whole=not stream),
                                   similarity=round(max(-1.0, min(1.0, hit.similarity)), 4),
                                   entry_id=id_text(hit.entry.id), answer=answer, matched=hit.entry.query)
        receipt = Receipt()
        store = Storer(self.exact, self.semantic, self.admission, self.answer_log, receipt, endpoint, request, key,
                       controls, lookup, route)
        chunks, joined = self._call(route, request, key, controls, store)
        chunks = await first_answer(chunks, lambda: BackendUnavailable(
            f"the backend of '{request.model}' returned no answer"))
        cache = "joined" if joined else "miss" if controls.lookup else "bypass"
        return Outcome(cache, key, route, chunks, receipt=receipt)

    def _call(self, route: Route, request: BackendRequest, key: str, controls: CacheControls,
              store: Storer) -> tuple[AsyncIterator[Chunk], bool]:
        if self.flights is not None and controls.shareable and (flight := self.flights.join(key)) is not None:
            return flight.subscribe(), True
        answer = record(generate_with_fallback(self.backends, route, request), store)
        if self.flights is None or not controls.shareable:
            return answer, False
        return self.flights.lead(key, answer).subscribe(), False

    async def _curated_hit(self, lookup: Lookup | None, route: Route, request: BackendRequest, key: str,
                           stream: bool) -> Outcome | None:
        """A curated answer for the question, matched before learned entries (plain-text answers only)."""
        if self.curated is None or lookup is None or not cuttable(request):
            return None
        try:
            found = await self.curated.find(lookup, route.model, route.tier)
        except Exception:  # noqa: BLE001 - the library failing is a miss, never a failed request
            log.exception("curated lookup failed; treated as a miss")
            return None
        answer = found.hit.entry.answer.fit(request.params.max_tokens) if found is not None else None
        if answer is None:
            return None
        return Outcome("hit-curated", key, route, replay(answer, self.policy.pacing, whole=not stream),
                       similarity=round(max(-1.0, min(1.0, found.hit.similarity)), 4), entry_id=found.answer_id,
                       answer=answer, matched=found.hit.entry.query)

    async def _exact_hit(self, request: BackendRequest, controls: CacheControls, key: str) -> CachedAnswer | None:
        if self.exact is None:
            return None
        answer = await self.exact.lookup(request.tenant, controls.namespace, key)
        if answer is None or (controls.max_age_s is not None and time.time() - answer.created > controls.max_age_s):
            return None
        return answer.fit(request.params.max_tokens, cuttable(request))


def cuttable(request: BackendRequest) -> bool:
    """Whether a cached answer may be cut to a smaller `max_tokens`: not when the answer has a structure
    (a JSON schema or object, tool calls) that a cut would break."""
    return not request.tools and "response_format" not in request.extra


@dataclass
class Storer:
    """Offers a finished answer to both tiers, once, before its last chunk is passed on, and notes what they kept
    on the receipt. Never raises: a failed store is logged and noted, and the client still gets its answer."""
    exact: ExactTier | None
    semantic: SemanticTier | None
    admission: AdmissionPolicy
    answer_log: AnswerLog | None
    receipt: Receipt
    endpoint: str
    request: BackendRequest
    key: str
    controls: CacheControls
    lookup: Lookup | None
    route: Route

    def __post_init__(self) -> None:
        self.builder = AnswerBuilder(self.request.model)

    async def on_chunk(self, chunk: Chunk) -> None:
        self.builder.add(chunk)
        if chunk.finish_reason:
            answer = self.builder.answer()
            try:
                await self.admit(answer)
            except Exception:  # noqa: BLE001 - a store that fails must not fail the request
                log.exception("storing an answer failed; it is served uncached")
                self.receipt.failed = True
            if self.answer_log is not None:      # never raises
                await self.answer_log.offer(self.request, self.route, self.controls, answer)

    async def admit(self, answer: CachedAnswer) -> None:
        controls, request = self.controls, self.request
        if controls.no_store or self.route.fell_back:     # a degraded answer is served, never kept
            return
        if answer.tool_calls and not request.params.greedy:   # a sampled call is not the call
            return
        if self.exact is not None and self.admission.admits(answer, "exact"):
            ttl = self.admission.ttl_for(controls.ttl_s, controls.namespace)
            if await self.exact.put(request.tenant, controls.namespace, self.key, answer, ttl):
                self._kept("exact", self.key, answer)
        if self.semantic is not None and not answer.tool_calls and self.admission.admits(answer, "semantic"):
            lookup = self.lookup or await self._prepare()
            if lookup is not None:
                ttl = self.admission.ttl_for(controls.ttl_s, controls.namespace, self.semantic.cfg.ttl_s)
                entry = await self.semantic.put(lookup, answer, ttl)
                if entry is not None:
                    self._kept("semantic", id_text(entry.id), answer)

    def _kept(self, tier: str, id: str, answer: CachedAnswer) -> None:
        r = self.request
        self.receipt.stored.append(Stored(tier, id, r.tenant, self.controls.namespace, r.model, r.question,
                                          answer.text))

    async def _prepare(self) -> Lookup | None:
        try:
            return await self.semantic.prepare(self.endpoint, self.request, self.controls.namespace)
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
    try:
        async for chunk in chunks:
            await store.on_chunk(chunk)
            yield chunk
    finally:
        await chunks.aclose()


async def replay(answer: CachedAnswer, pacing: str = "none", whole: bool = False) -> AsyncIterator[Chunk]:
    """A cached answer streamed in the shape a fresh one had: a chunk per piece the backend sent (about
    a token; words for answers stored without pieces), tool calls, then the finish with its usage.
    `pacing="original"` keeps the backend's timing between chunks; `whole` sends the text as one chunk
    (for a client that does not stream)."""
    pieces = [len(answer.text)] if whole else answer.pieces or word_pieces(answer.text)
    offsets = answer.offsets_ms if pacing == "original" and answer.offsets_ms else None
    start, at = time.perf_counter(), 0
    for i, size in enumerate(pieces):
        if offsets is not None and i < len(offsets):
            await asyncio.sleep(max(0.0, offsets[i] / 1000 - (time.perf_counter() - start)))
        yield Chunk(text=answer.text[at:at + size])
        at += size
    if answer.tool_calls:
        yield Chunk(tool_calls=[{"index": i, **call} for i, call in enumerate(answer.tool_calls)])
    yield Chunk(finish_reason=answer.finish_reason, usage=answer.usage)
