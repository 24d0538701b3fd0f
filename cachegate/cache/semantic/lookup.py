"""Looking a question up: its probe, scope and vectors (`prepare`), the entries the index finds near it, and the
policy's judgement over them (one at a time, or all at once for the matcher, which needs the rivals).

Any failure inside a lookup degrades it to a miss.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, replace

import numpy as np

from cachegate.backends.base import BackendRequest
from cachegate.cache.semantic.context import Probe, probe_of
from cachegate.cache.semantic.entry import SemanticEntry, index_vector
from cachegate.cache.semantic.parts import TierParts
from cachegate.cache.semantic.scope import scope_of
from policies.matcher import merge_answers
from policies.thresholds import Candidate

log = logging.getLogger(__name__)
INLINE_SEARCH_MAX = 20_000   # smaller scopes are searched on the event loop; larger ones on a thread
ANSWER_CHARS = 1000          # of a cached answer embedded to compare it with another


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


class TunedCosines:
    """One lookup's candidates scored by the matcher's tuned projection, worked out once for all its steps (a
    policy with another projection, swapped in while a step awaits, gets its own)."""

    def __init__(self, candidates: list[Candidate]) -> None:
        self.candidates = candidates
        self.done: list[tuple[np.ndarray, np.ndarray]] = []     # (projection, tuned cosines)

    def of(self, policy) -> np.ndarray:
        for projection, tuned in self.done:
            if projection is policy.projection:
                return tuned
        tuned = policy.tuned_cosines(self.candidates)
        self.done.append((policy.projection, tuned))
        return tuned


class Lookups:
    def __init__(self, parts: TierParts) -> None:
        self.parts = parts

    async def prepare(self, endpoint: str, request: BackendRequest, namespace: str) -> Lookup | None:
        """Probe, scope and vectors of a request; None when the tier does not apply to it."""
        cfg = self.parts.cfg
        probe = probe_of(request, cfg.context_turns, cfg.max_context_chars, cfg.history)
        if probe is None:
            return None
        vectors = await self.parts.embedder.embed(probe.texts)
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
            self.parts.counts["errors"] += 1
            return None
        self.parts.counts["hits" if found and found.hit else "misses"] += 1
        return found

    async def find(self, probe: Lookup, max_age_s: float | None = None) -> Hit | None:
        parts = self.parts
        matches = await self.search(probe.scope, probe.vector)
        floor = parts.policy.fetch_floor
        now = time.time()
        wanted = [m.id for m in matches if m.score >= floor and self._fresh(m.id, now, max_age_s)]
        entries = []
        for entry_id_, entry in zip(wanted, await parts.entries.get_many(wanted)):
            if entry is None:
                self._forget_missing(entry_id_)
            else:
                entries.append(entry)
        best = await self.match(probe, entries) if parts.policy.judges_together else self.best_judged(probe, entries)
        if best is not None:
            parts.catalog.touch(best.entry.id)
            parts.background(parts.entries.bump_hits(best.entry))
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
        parts = self.parts        # its policy read at each step: it may be replaced while a step awaits
        candidates = [self.candidate(probe, e) for e in entries]
        tuned = TunedCosines(candidates)
        answers = await self.answer_keys(candidates, [e.answer.text for e in entries], probe.namespace, tuned)
        keep = parts.policy.shortlist(candidates, answers, probe.namespace, tuned.of(parts.policy))
        if keep and parts.verifier is not None:
            logits = await parts.verifier.score(probe.probe.query, [entries[i].query for i in keep])
            for i, z in zip(keep, logits):
                candidates[i] = replace(candidates[i], verified=float(z))
        index, decision = parts.policy.choose(candidates, answers, probe.namespace, tuned.of(parts.policy))
        if index is None:
            return None
        return Hit(entries[index], candidates[index].cosine, decision.score)

    async def answer_keys(self, candidates: list[Candidate], answers: list[str], namespace: str,
                          tuned: TunedCosines) -> list[str]:
        """Answers as the matcher compares them: free-text answers that say the same (two paraphrases cached with
        two generated answers) are one answer, not rivals. Embedded only when they would block a hit."""
        policy = self.parts.policy
        contenders = policy.contenders(candidates, answers, namespace, tuned.of(policy))
        if not contenders:
            return answers
        vectors = await self.parts.embedder.embed([answers[i][:ANSWER_CHARS] for i in contenders])
        return merge_answers(answers, contenders, np.asarray(vectors), self.parts.policy.same_answer)

    async def search(self, scope: str, vector: np.ndarray) -> list:
        catalog, top_k = self.parts.catalog, self.parts.cfg.top_k
        index = catalog.scopes.get(scope)
        if index is None:
            return []
        if len(index) <= INLINE_SEARCH_MAX:
            return catalog.search(scope, vector, top_k)
        return await asyncio.to_thread(catalog.search, scope, vector, top_k)

    def judge(self, probe: Lookup, entry: SemanticEntry) -> Hit | None:
        """The policy's verdict on one entry."""
        candidate = self.candidate(probe, entry)
        decision = self.parts.policy.decide(candidate, probe.namespace)
        return Hit(entry, candidate.cosine, decision.score) if decision.hit else None

    @staticmethod
    def candidate(probe: Lookup, entry: SemanticEntry) -> Candidate:
        """The lookup against one entry as policies see it; an entry of another scope or tenant is never served."""
        assert entry.scope == probe.scope and entry.tenant == probe.tenant, "an entry crossed its scope"
        cosine = float(np.dot(probe.query_vector, entry.query_vector))
        has_ctx, entry_ctx = probe.context_vector is not None, entry.context_vector is not None
        context_cosine = float(np.dot(probe.context_vector, entry.context_vector)) if has_ctx and entry_ctx \
            else None
        return Candidate(probe.probe.query, entry.query, cosine, context_cosine, has_ctx != entry_ctx,
                         probe.query_vector, entry.query_vector, entry_answer=entry.answer.text)

    def _fresh(self, entry_id_: int, now: float, max_age_s: float | None) -> bool:
        meta = self.parts.catalog.meta.get(entry_id_)
        if meta is None or meta.expires_at <= now:
            return False
        return max_age_s is None or now - meta.created <= max_age_s

    def _forget_missing(self, entry_id_: int) -> None:
        if self.parts.entries.reachable:      # gone from the store (evicted, expired, deleted elsewhere)
            self.parts.catalog.remove(entry_id_)
