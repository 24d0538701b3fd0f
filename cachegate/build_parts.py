"""Every policy and store the gateway builds from its settings, in one module: the tiers' stores and the one
Redis client the rest shares, the semantic policy (`cache.semantic.policy`, a tagged union) and the semantic
tier around it, the routing, admission and cache policies.

`cachegate.build` wires these parts into the gateway; commands and load tests that need one part build it here.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from cachegate.cache.semantic import matcher_files
from cachegate.cache.semantic.policy_file import packaged_policy, read_policy
from cachegate.settings import PACKAGED_POLICY, RoutingSettings, SemanticCacheSettings, Settings
from cachegate.stores.factory import open_store
from cachegate.stores.guarded import GuardedStore, StoreHealth
from policies.admission import AdmissionPolicy
from policies.routing import ComplexityRouter, ComplexityWeights, FixedRouter, Router
from policies.thresholds import ThresholdPolicy, policy_from_dict

if TYPE_CHECKING:
    from cachegate.cache.semantic.embedder import Embedder
    from cachegate.cache.semantic.tier import SemanticTier
    from cachegate.pipeline import CachePolicy


# -- Redis and the stores --------------------------------------------------------------------------
def redis_client(settings: Settings):
    """The gateway's one Redis client (None without `redis.url`): the tiers' stores, auth keys, rate limits, the
    fleet's telemetry series and the answer log share it, and the services close it last."""
    if not settings.redis.url:
        return None
    from cachegate.stores.redis import connect
    return connect(settings.redis.url, settings.redis.socket_timeout_s)


def exact_store(settings: Settings, health: StoreHealth | None = None, client=None) -> GuardedStore:
    cfg = settings.cache.exact
    return open_store("exact", cfg.store, cfg.max_bytes, settings.redis, health, client)


def build_semantic_store(settings: Settings, health: StoreHealth | None = None, client=None) -> GuardedStore:
    cfg = settings.cache.semantic
    # room above the tier's own bound, so the memory store's LRU never evicts behind the catalog's back
    return open_store("semantic", cfg.store, cfg.max_bytes * 2, settings.redis, health, client)


# -- the semantic policy ---------------------------------------------------------------------------
def matcher_folder(cfg: SemanticCacheSettings) -> Path | None:
    """The matcher's folder when the policy is a matcher whose files are there, else None."""
    policy = cfg.policy
    if policy.kind != "matcher":
        return None
    if policy.path == PACKAGED_POLICY:
        folder = matcher_files.packaged_folder()
        return folder if matcher_files.is_matcher(folder) else None
    return Path(policy.path) if matcher_files.is_matcher(policy.path) else None


def semantic_policy(cfg: SemanticCacheSettings) -> ThresholdPolicy:
    """The policy `cache.semantic.policy` names, with the namespaces' settings: under a cosine policy a namespace's
    `threshold` is its own; under a matcher or calibrated policy a namespace takes a `target_false_hit_rate`, or a
    `threshold` to decide that namespace by plain cosine (a lenient FAQ namespace)."""
    policy = cfg.policy
    by_cosine = {n: s.threshold for n, s in cfg.namespaces.items() if s.threshold is not None}
    if policy.kind == "cosine":
        data = {"kind": "cosine", "threshold": policy.threshold,
                "context_gate": packaged_policy().get("context_gate", {})}
        return policy_from_dict(data, by_cosine)
    targets = {n: s.target_false_hit_rate for n, s in cfg.namespaces.items() if s.target_false_hit_rate is not None}
    if policy.kind == "matcher":
        folder = matcher_folder(cfg)
        if folder is not None:
            return matcher_files.load_policy(folder, targets, by_cosine)
        if policy.path != PACKAGED_POLICY:
            raise ValueError(f"cache.semantic.policy: {policy.path} holds no matcher.json "
                             "(a folder written by `cachegate train matcher`)")
    return policy_from_dict(read_policy(policy.path), targets, by_cosine)   # a build without the matcher's files:
                                                                            # the packaged calibrated evaluator


def single_threaded_blas() -> None:
    """numpy's BLAS on one thread, for the process. The tier's products are small (a question against its
    candidates, through the matcher's 384x384 projection) and run on the event loop, while OpenBLAS's worker
    threads spin between calls on the cores the embedder needs (bench semantic, 32 clients at 100k entries:
    190 -> 228 lookups/s once warm, 1.9 -> 1.3 cores busy)."""
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=1, user_api="blas")


def build_semantic_tier(settings: Settings, store: GuardedStore, embedder: Embedder | None = None) -> SemanticTier:
    """The tier in `store`: its embedder, index, policy (with the matcher's verifier) and, on Redis, its follower."""
    from cachegate.cache.semantic.catalog import Catalog
    from cachegate.cache.semantic.embedder import Embedder
    from cachegate.cache.semantic.entries import EntryStore
    from cachegate.cache.semantic.follow import Follower
    from cachegate.cache.semantic.index import IndexConfig
    from cachegate.cache.semantic.tier import SemanticTier, TierConfig
    from cachegate.cache.semantic.verifier import Verifier
    from policies import wordnet_verbs
    from policies.eviction import EvictionPolicy
    cfg = settings.cache.semantic
    single_threaded_blas()
    embedder = embedder or Embedder(cfg.embedder.model, cfg.embedder.max_batch, cfg.embedder.max_wait_ms,
                                    cache_size=cfg.embedder.cache_size, precision=cfg.embedder.precision,
                                    threads=cfg.embedder.threads)
    index = IndexConfig(approximate_after=cfg.index.approximate_after, nprobe=cfg.index.nprobe,
                        tombstone_fraction=cfg.index.tombstone_fraction)
    tier = SemanticTier(
        entries=EntryStore(store, cfg.namespace), embedder=embedder, policy=semantic_policy(cfg),
        catalog=Catalog(index), eviction=EvictionPolicy(cfg.max_entries, cfg.max_bytes),
        cfg=TierConfig(ttl_s=cfg.ttl_s, top_k=cfg.index.top_k, context_turns=cfg.context_turns,
                       max_context_chars=cfg.max_context_chars, history=cfg.history,
                       sweep_interval_s=cfg.sweep_interval_s))
    wordnet_verbs.warm()          # the action veto's verb table, read by every lookup's vetoes
    folder = matcher_folder(cfg)
    if folder is not None and (folder / "verifier.safetensors").exists():
        tier.verifier = Verifier(str(folder), cfg.embedder.precision, cfg.embedder.threads)
        tier.verifier.warm()
    if cfg.store == "redis":
        tier.follower = Follower(store.store, f"{cfg.namespace}-events", tier.follow_put, tier.catalog.remove,
                                 tier.load, retry_s=max(0.1, settings.redis.retry_interval_s))
    return tier


# -- the other policies ----------------------------------------------------------------------------
def routing_policy(routing: RoutingSettings) -> Router:
    """How `model: auto` picks a tier: by complexity, a learned router (`cachegate router train`) or a fixed tier."""
    if routing.policy == "fixed":
        return FixedRouter(routing.fixed_tier)
    if routing.policy == "learned":
        from policies.learned_router import LearnedRouter
        if not routing.learned_path:
            raise ValueError("routing.policy 'learned' needs routing.learned_path (see `cachegate router train`)")
        return LearnedRouter.from_dict(json.loads(Path(routing.learned_path).read_text()))
    c = routing.complexity
    return ComplexityRouter(threshold=c.threshold, weights=ComplexityWeights(**c.weights),
                            completion_small_below_tokens=c.completion_small_below_tokens)


def admission_policy(settings: Settings) -> AdmissionPolicy:
    """Which answers the tiers keep, and for how long (per semantic namespace where one sets `ttl_s`)."""
    namespace_ttl = {n: s.ttl_s for n, s in settings.cache.semantic.namespaces.items() if s.ttl_s}
    return AdmissionPolicy(store_truncated=settings.cache.semantic.store_truncated,
                           exact_stores_truncated=settings.cache.exact.store_truncated,
                           ttl_s=settings.cache.exact.ttl_s,
                           namespace_ttl_s=namespace_ttl)


def cache_policy(settings: Settings) -> CachePolicy:
    """Sampled requests and replayed streams (`cache.sampled`, `cache.replay_pacing`)."""
    from cachegate.pipeline import CachePolicy
    return CachePolicy(sampled=settings.cache.sampled, pacing=settings.cache.replay_pacing)
