"""The curated library: answer records in the semantic store, and an index of their example questions that
the semantic tier's own retrieval, verifier and decision match against (so several examples of one answer
vote together, as an intent). The index is a tier of its own: learned entries never push curated ones
out, and a backend answer never overwrites one. A curated answer serves a conversation's first question
only, for its tenant (or every tenant), model or tier (or every one) and namespace."""
from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import Counter
from dataclasses import dataclass, replace
from urllib.parse import quote

from cachegate.backends.base import Usage
from cachegate.cache.answer import CachedAnswer, word_pieces
from cachegate.cache.curated.records import ANY, CuratedAnswer
from cachegate.cache.semantic.context import Probe
from cachegate.cache.semantic.entry import SemanticEntry, entry_id
from cachegate.cache.semantic.tier import Hit, Lookup, SemanticTier
from cachegate.stores.base import namespaced
from cachegate.stores.guarded import GuardedStore

log = logging.getLogger(__name__)
FOREVER_S = 100 * 365 * 24 * 3600.0      # "no TTL": entries still carry an expiry, a century away
MODEL_TAG = "curated:"                   # a curated entry's answer names its record: "curated:<id>"


def curated_scope(tenant: str, model: str, namespace: str) -> str:
    material = f"curated\x00{tenant}\x00{model}\x00{namespace}"
    return "curated-" + hashlib.sha256(material.encode()).hexdigest()[:24]


def answer_of(record: CuratedAnswer) -> CachedAnswer:
    """The answer as a cache hit replays it: in words (about a token each), usage estimated from them."""
    pieces = word_pieces(record.answer)
    return CachedAnswer(record.answer, "stop", MODEL_TAG + record.id, Usage(0, len(pieces)), created=record.updated,
                        pieces=pieces)


@dataclass
class CuratedHit:
    hit: Hit
    answer_id: str


class CuratedLibrary:
    def __init__(self, tier: SemanticTier, index: SemanticTier, store: GuardedStore,
                 namespace: str = "curated-answers") -> None:
        self.tier = tier              # the semantic tier: its policy and verifier decide
        self.index = index            # example questions as entries, in a catalog of their own
        self.store = store
        self.namespace = namespace
        self.hits: Counter = Counter()
        self.lock = asyncio.Lock()

    def key(self, answer_id: str) -> str:
        return namespaced(self.namespace, quote(answer_id, safe=""))

    # -- the library ---------------------------------------------------------------------------
    async def put(self, record: CuratedAnswer) -> str:
        """Store or replace an answer with its examples; "created", "updated" or "unchanged" (idempotent)."""
        async with self.lock:
            kept = await self.get(record.id)
            if kept is not None and kept.same_content(record):
                return "unchanged"
            record = record.model_copy(update={"updated": time.time()})
            if kept is not None:
                await self._drop_entries(kept)
            await self._add_entries(record)
            await self.store.set(self.key(record.id), record.model_dump_json().encode(), record.ttl_s)
            return "updated" if kept is not None else "created"

    async def delete(self, answer_id: str) -> bool:
        async with self.lock:
            kept = await self.get(answer_id)
            if kept is None:
                return False
            await self._drop_entries(kept)
            await self.store.delete(self.key(answer_id))
            return True

    async def get(self, answer_id: str) -> CuratedAnswer | None:
        raw = await self.store.get(self.key(answer_id))
        if raw is None:
            return None
        try:
            return CuratedAnswer.model_validate_json(raw)
        except ValueError:
            log.warning("dropping an unreadable curated answer %s", answer_id)
            await self.store.delete(self.key(answer_id))
            return None

    async def all(self) -> list[CuratedAnswer]:
        keys = [k async for k in self.store.scan(self.namespace)]
        found = await asyncio.gather(*(self.store.get(k) for k in keys))
        out = []
        for raw in filter(None, found):
            try:
                out.append(CuratedAnswer.model_validate_json(raw))
            except ValueError:
                continue
        return sorted(out, key=lambda a: a.id)

    async def search(self, query: str = "", limit: int = 50) -> list[dict]:
        q = query.lower()
        rows = [a for a in await self.all() if not q or q in a.id.lower() or q in a.answer.lower()
                or any(q in question.lower() for question in a.questions)]
        return [a.view(self.hits[a.id]) for a in rows[:limit]]

    # -- matching ------------------------------------------------------------------------------
    async def find(self, lookup: Lookup, model: str, tier_name: str) -> CuratedHit | None:
        """The best curated answer for a prepared lookup (a conversation's first question), or None."""
        if lookup.probe.history or lookup.probe.context:
            return None
        self.index.policy = self.tier.policy               # as the tier decides now (verification may tighten it)
        best: Hit | None = None
        for tenant in dict.fromkeys((lookup.tenant, ANY)):
            for target in dict.fromkeys((model, tier_name, ANY)):
                scope = curated_scope(tenant, target, lookup.namespace)
                if scope not in self.index.catalog.scopes:
                    continue
                hit = await self.index.find(replace(lookup, scope=scope, tenant=tenant, hit=None))
                if hit is not None and (best is None or hit.score > best.score):
                    best = hit
        if best is None:
            return None
        answer_id = best.entry.answer.model.removeprefix(MODEL_TAG)
        self.hits[answer_id] += 1
        return CuratedHit(best, answer_id)

    async def _add_entries(self, record: CuratedAnswer) -> None:
        scope = curated_scope(record.tenant or ANY, record.model or ANY, record.namespace)
        vectors = await self.tier.embedder.embed(record.questions)
        now = time.time()
        answer = answer_of(record)
        for question, vector in zip(record.questions, vectors):
            probe = Probe(question)
            entry = SemanticEntry(entry_id(scope, probe), scope, record.namespace, record.tenant or ANY, question, "",
                                  vector, None, answer, expires_at=now + (record.ttl_s or FOREVER_S), created=now)
            if await self.index.entries.put(entry):
                self.index.remember(entry)
                if self.index.follower is not None:
                    await self.index.follower.publish_put(entry.id)

    async def _drop_entries(self, record: CuratedAnswer) -> None:
        scope = curated_scope(record.tenant or ANY, record.model or ANY, record.namespace)
        await self.index.delete([entry_id(scope, Probe(q)) for q in record.questions])

    async def start(self) -> None:
        await self.index.start()

    async def close(self) -> None:
        await self.index.close()


def build_library(settings, tier: SemanticTier, store: GuardedStore) -> CuratedLibrary:
    """The library beside `tier`, in the same store: its own catalog (never evicted), the tier's embedder,
    verifier and decision, and on Redis its own feed of changes for the other replicas."""
    from cachegate.cache.semantic.catalog import Catalog
    from cachegate.cache.semantic.entries import EntryStore
    from cachegate.cache.semantic.follow import Follower
    from policies.eviction import EvictionPolicy
    cfg = settings.cache.semantic
    index = SemanticTier(entries=EntryStore(store, settings.cache.curated.namespace), embedder=tier.embedder,
                         policy=tier.policy, catalog=Catalog(tier.catalog.cfg), eviction=EvictionPolicy(1 << 62, 1 << 62),
                         cfg=replace(tier.cfg, ttl_s=FOREVER_S))
    index.verifier = getattr(tier, "verifier", None)       # the matcher's cross-encoder, shared
    if cfg.store == "redis":
        index.follower = Follower(store.store, f"{settings.cache.curated.namespace}-events", index.follow_put,
                                  index.catalog.remove, index.load, retry_s=max(0.1, settings.redis.retry_interval_s))
    return CuratedLibrary(tier, index, store, f"{settings.cache.curated.namespace}-answers")
