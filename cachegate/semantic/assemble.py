"""Building the semantic tier from the settings: its store, embedder, index, policy and follower."""
from __future__ import annotations

from cachegate.semantic.catalog import Catalog
from cachegate.semantic.embedder import Embedder
from cachegate.semantic.entries import EntryStore
from cachegate.semantic.follow import Follower
from cachegate.semantic.index import IndexConfig
from cachegate.semantic.policy_file import load_policy
from cachegate.semantic.tier import SemanticTier, TierConfig
from cachegate.settings import Settings
from cachegate.stores.guarded import GuardedStore
from cachegate.stores.memory import MemoryStore
from policies.eviction import EvictionPolicy


def build_semantic_store(settings: Settings) -> GuardedStore:
    cfg = settings.cache.semantic
    if cfg.store == "redis":
        if not settings.redis.url:
            raise ValueError("cache.semantic.store is 'redis' but redis.url is not set")
        from cachegate.stores.redis import RedisStore
        store = RedisStore(settings.redis.url, settings.redis.key_prefix, settings.redis.socket_timeout_s)
    else:   # room above the tier's own bound, so the store's LRU never evicts behind the catalog's back
        store = MemoryStore(max_bytes=cfg.max_bytes * 2)
    return GuardedStore(store, retry_interval_s=settings.redis.retry_interval_s)


def build_semantic_tier(settings: Settings, store: GuardedStore, embedder: Embedder | None = None) -> SemanticTier:
    cfg = settings.cache.semantic
    embedder = embedder or Embedder(cfg.embedder.model, cfg.embedder.max_batch, cfg.embedder.max_wait_ms,
                                    cache_size=cfg.embedder.cache_size)
    index = IndexConfig(approximate_after=cfg.index.approximate_after, nprobe=cfg.index.nprobe,
                        tombstone_fraction=cfg.index.tombstone_fraction)
    tier = SemanticTier(
        entries=EntryStore(store, cfg.namespace), embedder=embedder, policy=load_policy(cfg),
        catalog=Catalog(index), eviction=EvictionPolicy(cfg.max_entries, cfg.max_bytes),
        cfg=TierConfig(ttl_s=cfg.ttl_s, top_k=cfg.index.top_k, context_turns=cfg.context_turns,
                       max_context_chars=cfg.max_context_chars, sweep_interval_s=cfg.sweep_interval_s))
    if cfg.store == "redis":
        tier.follower = Follower(store.store, f"{cfg.namespace}-events", tier.follow_put, tier.catalog.remove,
                                 tier.load, retry_s=max(0.1, settings.redis.retry_interval_s))
    return tier
