"""The semantic tier: embed the question in its context, search its scope, let the policy decide.

`lookup` returns the probe, its scope and vectors, and the hit if any; `put` stores an answer under the
same probe (reusing the lookup's vectors). Any failure inside the tier degrades it to a miss.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from cachegate.backends.base import BackendRequest
from cachegate.cache.answer import CachedAnswer
from cachegate.cache.semantic.catalog import Catalog, Meta
from cachegate.cache.semantic.context import Probe, probe_of
from cachegate.cache.semantic.embedder import Embedder
from cachegate.cache.semantic.entries import EntryStore
from cachegate.cache.semantic.entry import SemanticEntry, entry_id, index_vector
from cachegate.cache.semantic.follow import Follower
from cachegate.cache.semantic.scope import scope_of
from cachegate.cache.semantic.verifier import Verifier
from policies.eviction import EvictionPolicy, Usage
from policies.matcher import MatcherPolicy, merge_answers
from policies.thresholds import Candidate, ThresholdPolicy

log = logging.getLogger(__name__)
INLINE_SEARCH_MAX = 20_000   # smaller scopes are searched on the event loop; larger ones on a thread
ANSWER_CHARS = 1000          # of a cached answer embedded to compare it with another


@dataclass(frozen=True)
class TierConfig:
    ttl_s: float = 3600.0
    top_k: int = 16
    context_turns: int = 1
    max_context_chars: int = 1500
    history: str = "exact"          # "exact": earlier turns must match exactly | "window": see context.py
    sweep_interval_s: float = 30.0


@dataclass
class Hit:
    entry: SemanticEntry
    similarity: float   # cosine of the two questions
    score: float        # the policy's score


@dataclass
class Lookup:
    probe: Probe
    scope: str
    namespace: str
    tenant: str
    query_vector: np.ndarray
    context_vector: np.ndarray | None
    hit: Hit | None = None

    @property
    def vector(self) -> np.ndarray:
        return index_vector(self.query_vector, self.context_vector)


@dataclass
class SemanticTier:
    entries: EntryStore
    embedder: Embedder
    policy: ThresholdPolicy
    catalog: Catalog
    eviction: EvictionPolicy
    cfg: TierConfig = TierConfig()
    follower: Follower | None = None
    counts: Counter = field(default_factory=Counter)
    _tasks: set = field(default_factory=set)
    verifier: Verifier | None = None     # the matcher's cross-encoder, when the policy is the matcher

    # -- lookups -------------------------------------------------------------------------------
    async def prepare(self, endpoint: str, request: BackendRequest, namespace: str) -> Lookup | None:
        """Probe, scope and vectors of a request; None when the tier does not apply to it."""
        probe = probe_of(request, self.cfg.context_turns, self.cfg.max_context_chars, self.cfg.history)
        if probe is None:
            return None
        vectors = await self.embedder.embed(probe.texts)
        return Lookup(probe, scope_of(endpoint, request, namespace, probe.history), namespace, request.tenant,
                      vectors[0], vectors[1] if probe.context else None)

    async def lookup(self, endpoint: str, request: BackendRequest, namespace: str = "default",
                     max_age_s: float | None = None) -> Lookup | None:
        try:
            found = await self.prepare(endpoint, request, namespace)
            if found is not None:
                found.hit = await self.find(found, max_age_s)
        except Exception:
            log.exception("semantic lookup failed; treated as a miss")
            self.counts["errors"] += 1
            return None
        self.counts["hits" if found and found.hit else "misses"] += 1
        return found

    async def find(self, probe: Lookup, max_age_s: float | None = None) -> Hit | None:
        matches = await self.search(probe.scope, probe.vector)
        floor = self.policy.min_cosine - 0.1
        now = time.time()
        wanted = [m.id for m in matches if m.score >= floor and self._fresh(m.id, now, max_age_s)]
        entries = []
        for entry_id_, entry in zip(wanted, await self.entries.get_many(wanted)):
            if entry is None:
                self._forget_missing(entry_id_)
            else:
                entries.append(entry)
        best = await self.match(probe, entries) if isinstance(self.policy, MatcherPolicy) \
            else self.best_judged(probe, entries)
        if best is not None:
            self.catalog.touch(best.entry.id)
            self._background(self.entries.bump_hits(best.entry))
        return best

    def best_judged(self, probe: Lookup, entries: list[SemanticEntry]) -> Hit | None:
        """The policy's best verdict over the entries, one entry at a time."""
        best: Hit | None = None
        for entry in entries:
            hit = self.judge(probe, entry)
            if hit is not None and (best is None or hit.score > best.score):
                best = hit
        return best

    async def match(self, probe: Lookup, entries: list[SemanticEntry]) -> Hit | None:
        """The matcher decides over all the entries at once (the margin needs the rivals); when it gates on the
        verifier, the one entry about to be served is scored first (concurrent lookups share a verifier call)."""
        candidates = [self.candidate(probe, e) for e in entries]
        answers = await self.answer_keys(candidates, [e.answer.text for e in entries], probe.namespace)
        keep = self.policy.shortlist(candidates, answers, probe.namespace)
        if keep and self.verifier is not None:
            logits = await self.verifier.score(probe.probe.query, [entries[i].query for i in keep])
            for i, z in zip(keep, logits):
                candidates[i] = replace(candidates[i], verified=float(z))
        index, decision = self.policy.choose(candidates, answers, probe.namespace)
        if index is None:
            return None
        return Hit(entries[index], candidates[index].cosine, decision.score)

    async def answer_keys(self, candidates: list[Candidate], answers: list[str], namespace: str) -> list[str]:
        """Answers as the matcher compares them: free-text answers that say the same (two paraphrases cached with
        two generated answers) are one answer, not rivals. Embedded only when they would block a hit."""
        contenders = self.policy.contenders(candidates, answers, namespace)
        if not contenders:
            return answers
        vectors = await self.embedder.embed([answers[i][:ANSWER_CHARS] for i in contenders])
        return merge_answers(answers, contenders, np.asarray(vectors), self.policy.same_answer)

    async def search(self, scope: str, vector: np.ndarray) -> list:
        index = self.catalog.scopes.get(scope)
        if index is None:
            return []
        if len(index) <= INLINE_SEARCH_MAX:
            return self.catalog.search(scope, vector, self.cfg.top_k)
        return await asyncio.to_thread(self.catalog.search, scope, vector, self.cfg.top_k)

    def judge(self, probe: Lookup, entry: SemanticEntry) -> Hit | None:
        """The policy's verdict on one entry."""
        candidate = self.candidate(probe, entry)
        decision = self.policy.decide(candidate, probe.namespace)
        return Hit(entry, candidate.cosine, decision.score) if decision.hit else None

    def candidate(self, probe: Lookup, entry: SemanticEntry) -> Candidate:
        """The lookup against one entry as policies see it; an entry of another scope or tenant is never served."""
        assert entry.scope == probe.scope and entry.tenant == probe.tenant, "an entry crossed its scope"
        cosine = float(np.dot(probe.query_vector, entry.query_vector))
        has_ctx, entry_ctx = probe.context_vector is not None, entry.context_vector is not None
        context_cosine = float(np.dot(probe.context_vector, entry.context_vector)) if has_ctx and entry_ctx \
            else None
        return Candidate(probe.probe.query, entry.query, cosine, context_cosine, has_ctx != entry_ctx,
                         probe.query_vector, entry.query_vector)

    # -- storing -------------------------------------------------------------------------------
    async def put(self, probe: Lookup, answer: CachedAnswer, ttl_s: float | None = None) -> SemanticEntry | None:
        try:
            return await self._put(probe, answer, ttl_s or self.cfg.ttl_s)
        except Exception:
            log.exception("storing a semantic entry failed")
            self.counts["errors"] += 1
            return None

    async def _put(self, probe: Lookup, answer: CachedAnswer, ttl_s: float) -> SemanticEntry | None:
        now = time.time()
        id_ = entry_id(probe.scope, probe.probe)
        if not answer.complete and id_ in self.catalog:     # a cut answer never replaces one covering more
            kept = await self.entries.get(id_)
            if kept is not None and kept.answer.covers(answer):
                return None
        entry = SemanticEntry(id_, probe.scope, probe.namespace, probe.tenant,
                              probe.probe.query, probe.probe.context, probe.query_vector, probe.context_vector,
                              answer, expires_at=now + ttl_s, created=now)
        if not await self.entries.put(entry):
            return None
        self.remember(entry)
        if self.follower is not None:
            await self.follower.publish_put(entry.id)
        self.counts["stored"] += 1
        await self.evict_if_over()
        return entry

    def remember(self, entry: SemanticEntry) -> None:
        meta = Meta(entry.scope, entry.namespace, entry.tenant, entry.created, entry.expires_at,
                    len(entry.query) + len(entry.context) + len(entry.answer.text) + 1600, last_used=entry.created)
        self.catalog.add(entry.id, entry.vector, meta)

    async def evict_if_over(self) -> None:
        if not self.eviction.over(len(self.catalog), self.catalog.bytes):
            return
        usage = [Usage(i, m.last_used, m.size) for i, m in list(self.catalog.meta.items())]
        victims = self.eviction.victims(usage, self.catalog.bytes)
        await self.delete(victims)
        self.counts["evicted"] += len(victims)

    # -- invalidation --------------------------------------------------------------------------
    async def delete(self, ids: list[int]) -> list[int]:
        """Delete entries everywhere: the store, this catalog, and (through the feed) other replicas."""
        for i in ids:
            self.catalog.remove(i)
            await self.entries.delete(i)
        if self.follower is not None:
            await self.follower.publish_delete(ids)
        return ids

    async def invalidate_namespace(self, tenant: str, namespace: str) -> list[int]:
        return await self.delete(self.catalog.ids_where(tenant=tenant, namespace=namespace))

    async def invalidate_similar(self, tenant: str, query: str, namespace: str | None = None,
                                 min_similarity: float | None = None) -> list[int]:
        """Forget every entry of the tenant (optionally one namespace) whose question is similar to `query`:
        cosine ≥ `min_similarity` when given, else what the policy would serve for it, whatever the context."""
        vector = (await self.embedder.embed([query]))[0]
        doomed: list[int] = []
        fields = {"tenant": tenant} | ({"namespace": namespace} if namespace else {})
        for scope in {self.catalog.meta[i].scope for i in self.catalog.ids_where(**fields)}:
            index = self.catalog.scopes[scope]
            matches = self.catalog.search(scope, vector, min(len(index), 256))
            ids = [m.id for m in matches if m.score >= (min_similarity or self.policy.min_cosine) - 0.15]
            for entry in filter(None, await self.entries.get_many(ids)):
                if self._similar(query, vector, entry, min_similarity):
                    doomed.append(entry.id)
        return await self.delete(doomed)

    def _similar(self, query: str, vector: np.ndarray, entry: SemanticEntry, min_similarity: float | None) -> bool:
        cosine = float(np.dot(vector, entry.query_vector))
        if min_similarity is not None:
            return cosine >= min_similarity
        candidate = Candidate(query, entry.query, cosine, query_vector=vector, entry_vector=entry.query_vector)
        return self.policy.decide(candidate, entry.namespace).hit

    # -- keeping the catalog in step -----------------------------------------------------------
    async def load(self) -> None:
        """Make the catalog match the store: add what it lacks, drop what the store no longer has."""
        seen: set[int] = set()
        batch: list[int] = []
        async for i in self.entries.ids():
            seen.add(i)
            if i not in self.catalog:
                batch.append(i)
            if len(batch) >= 256:
                await self._load_batch(batch)
                batch = []
        await self._load_batch(batch)
        if not self.entries.reachable:
            from cachegate.stores.base import StoreUnavailable
            raise StoreUnavailable("the entry store went away during a re-sync")
        for stale in [i for i in list(self.catalog.meta) if i not in seen]:
            self.catalog.remove(stale)

    async def _load_batch(self, ids: list[int]) -> None:
        for entry in filter(None, await self.entries.get_many(ids)):
            if entry.expires_at > time.time():
                self.remember(entry)

    async def follow_put(self, entry_id_: int) -> None:
        entry = await self.entries.get(entry_id_)
        if entry is not None:
            self.remember(entry)

    def sweep(self) -> int:
        """Drop expired entries from the catalog (the store expires them by itself)."""
        expired = self.catalog.expired()
        for i in expired:
            self.catalog.remove(i)
        return len(expired)

    async def start(self) -> None:
        await asyncio.to_thread(lambda: self.embedder.model)   # load the model before the first request
        if self.follower is not None:
            await self.follower.start()
        else:
            await self.load()
        self._background(self._sweep_forever())

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self.follower is not None:
            await self.follower.close()
        self.catalog.close()
        self.embedder.close()
        if self.verifier is not None:
            self.verifier.close()

    async def drain(self) -> None:
        """Wait for background work (hit counters) to finish; for tests and shutdown."""
        await asyncio.gather(*[t for t in self._tasks if t.get_name() != "sweeper"], return_exceptions=True)

    async def _sweep_forever(self) -> None:
        asyncio.current_task().set_name("sweeper")
        while True:
            await asyncio.sleep(self.cfg.sweep_interval_s)
            self.sweep()

    def _fresh(self, entry_id_: int, now: float, max_age_s: float | None) -> bool:
        meta = self.catalog.meta.get(entry_id_)
        if meta is None or meta.expires_at <= now:
            return False
        return max_age_s is None or now - meta.created <= max_age_s

    def _forget_missing(self, entry_id_: int) -> None:
        if self.entries.reachable:      # gone from the store (evicted, expired, deleted elsewhere)
            self.catalog.remove(entry_id_)

    def _background(self, coro) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
