"""Building the semantic tier from the settings: its store, embedder, index, policy (with the matcher's verifier)
and follower."""
from __future__ import annotations

from cachegate.cache.semantic.catalog import Catalog
from cachegate.cache.semantic.embedder import Embedder
from cachegate.cache.semantic.entries import EntryStore
from cachegate.cache.semantic.follow import Follower
from cachegate.cache.semantic.index import IndexConfig
from cachegate.cache.semantic.policy_file import load_policy, matcher_folder
from cachegate.cache.semantic.tier import SemanticTier, TierConfig
from cachegate.cache.semantic.verifier import Verifier
from cachegate.settings import Settings
from cachegate.stores.factory import open_store
from cachegate.stores.guarded import GuardedStore, StoreHealth
from policies.eviction import EvictionPolicy


def build_semantic_store(settings: Settings, health: StoreHealth | None = None) -> GuardedStore:
    cfg = settings.cache.semantic
    # room above the tier's own bound, so the memory store's LRU never evicts behind the catalog's back
    return open_store("semantic", cfg.store, cfg.max_bytes * 2, settings.redis, health)


def build_semantic_tier(settings: Settings, store: GuardedStore, embedder: Embedder | None = None) -> SemanticTier:
    cfg = settings.cache.semantic
    embedder = embedder or Embedder(cfg.embedder.model, cfg.embedder.max_batch, cfg.embedder.max_wait_ms,
                                    cache_size=cfg.embedder.cache_size, precision=cfg.embedder.precision,
                                    threads=cfg.embedder.threads)
    index = IndexConfig(approximate_after=cfg.index.approximate_after, nprobe=cfg.index.nprobe,
                        tombstone_fraction=cfg.index.tombstone_fraction)
    tier = SemanticTier(
        entries=EntryStore(store, cfg.namespace), embedder=embedder, policy=load_policy(cfg),
        catalog=Catalog(index), eviction=EvictionPolicy(cfg.max_entries, cfg.max_bytes),
        cfg=TierConfig(ttl_s=cfg.ttl_s, top_k=cfg.index.top_k, context_turns=cfg.context_turns,
                       max_context_chars=cfg.max_context_chars, history=cfg.history,
                       sweep_interval_s=cfg.sweep_interval_s))
    folder = matcher_folder(cfg)
    if folder is not None and (folder / "verifier.safetensors").exists():
        tier.verifier = Verifier(str(folder), cfg.embedder.precision, cfg.embedder.threads)
        tier.verifier.warm()
    if cfg.store == "redis":
        tier.follower = Follower(store.store, f"{cfg.namespace}-events", tier.follow_put, tier.catalog.remove,
                                 tier.load, retry_s=max(0.1, settings.redis.retry_interval_s))
    return tier
