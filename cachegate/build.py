"""The services an app serves with (`Services`): backends, cache tiers, the pipeline, telemetry, keys and
limits, wired from the policies and stores `build_parts` makes from the settings; `build_engine_services` is
the smaller set an engine server needs.

Tests inject their own backends; everything else comes from the same settings object.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from cachegate.access.auth import KeyRing
from cachegate.access.ratelimit import RateLimiter
from cachegate.backends.base import Backend, ModelInfo
from cachegate.backends.pool import TierPool
from cachegate.backends.resilience import CircuitBreaker, ResilientBackend, RetryPolicy
from cachegate.build_parts import (
    admission_policy,
    build_semantic_store,
    build_semantic_tier,
    cache_policy,
    exact_store,
    redis_client,
    routing_policy,
)
from cachegate.cache.curated.library import CuratedLibrary, build_library
from cachegate.cache.exact import ExactTier
from cachegate.cache.semantic.tier import SemanticTier
from cachegate.cache.singleflight import SingleFlight
from cachegate.distill.log import build_answer_log
from cachegate.pipeline import Gateway
from cachegate.routing.router import ModelRouter
from cachegate.settings import ModelSettings, Settings
from cachegate.stores.guarded import GuardedStore, StoreHealth
from cachegate.telemetry.accounting import PriceList
from cachegate.telemetry.ledger import Ledger
from cachegate.telemetry.recorder import Telemetry
from cachegate.telemetry.series import MinuteSeries, RedisSeries
from cachegate.telemetry.stats import Stats
from cachegate.verified.service import Verification
from cachegate.verified.service import build as build_verification


@dataclass
class Services:
    settings: Settings
    gateway: Gateway
    stats: Stats
    telemetry: Telemetry
    keys: KeyRing
    limiter: RateLimiter
    stores: dict[str, GuardedStore] = field(default_factory=dict)
    started: int = field(default_factory=lambda: int(time.time()))
    semantic: SemanticTier | None = None
    redis: Any = None
    verification: Verification | None = None                      # shadow checks, feedback, the FHR target

    async def close(self) -> None:
        if self.verification is not None:
            self.verification.close()
        await self.telemetry.close()
        for backend in self.gateway.backends.values():
            await backend.close()
        if self.semantic is not None:
            await self.semantic.close()
        if self.gateway.curated is not None:
            await self.gateway.curated.close()
        for store in self.stores.values():
            await store.close()
        if self.gateway.answer_log is not None:
            await self.gateway.answer_log.close()
        if self.redis is not None:          # the one client, last: everything above may still use it
            await self.redis.aclose()


def build_backends(settings: Settings) -> dict[str, Backend]:
    """Each model: its replicas, each behind retries and a breaker, pooled by least outstanding."""
    return {m.name: TierPool(m.name, [resilient(replica, m) for replica in replicas_of(m)])
            for m in settings.models}


def replicas_of(model: ModelSettings) -> list[Backend]:
    if model.backend == "inprocess":
        from cachegate.backends.inprocess import InProcessBackend
        return [InProcessBackend(model)]
    from cachegate.backends.upstream import UpstreamBackend
    api_key = os.environ.get(model.api_key_env) if model.api_key_env else None
    return [UpstreamBackend(ModelInfo(model.name, model.tier, model.max_context or 0, model.default_max_tokens),
                            url, model.upstream_model, api_key, model.connect_timeout_s, model.read_timeout_s,
                            forward_tenant=model.backend == "engine")
            for url in model.replicas]


def resilient(backend: Backend, model: ModelSettings) -> ResilientBackend:
    r, b = model.retry, model.breaker
    return ResilientBackend(backend, RetryPolicy(r.attempts, r.base_delay_s, r.max_delay_s, r.jitter),
                            CircuitBreaker(b.failure_threshold, b.reset_after_s))


async def start_backends(settings: Settings, backends: dict[str, Backend] | None) -> dict[str, Backend]:
    """The backends given (tests inject theirs) or those the settings name, started."""
    backends = backends if backends is not None else build_backends(settings)
    for backend in backends.values():
        await backend.start()
    return backends


async def build_services(settings: Settings, backends: dict[str, Backend] | None = None) -> Services:
    backends = await start_backends(settings, backends)
    stats = Stats()
    redis = redis_client(settings)     # the one client: stores, keys, limits, the fleet's series, the answer log
    stores: dict[str, GuardedStore] = {}
    redis_health = StoreHealth("redis", settings.redis.retry_interval_s)    # one Redis, one health
    exact = None
    if settings.cache.exact.enabled:
        cfg = settings.cache.exact
        stores["exact"] = exact_store(settings, redis_health if cfg.store == "redis" else None, redis)
        exact = ExactTier(stores["exact"], settings.cache.exact.namespace, settings.cache.exact.ttl_s)
    semantic = await start_semantic(settings, stores, redis_health, redis)
    for store in stores.values():
        store.watch()
    admission = admission_policy(settings)
    flights = SingleFlight() if settings.cache.single_flight else None
    router = ModelRouter.from_settings(settings, routing_policy(settings.routing),
                                       embed=router_embedder(settings, semantic))
    ledger = Ledger()
    policy = cache_policy(settings)
    answer_log = build_answer_log(settings.distill, settings.redis.url, settings.redis.key_prefix,
                                  settings.redis.socket_timeout_s, redis)
    curated = await start_curated(settings, semantic, stores)
    gateway = Gateway(backends, exact, admission, semantic, flights, router, policy, answer_log, curated)
    telemetry = build_telemetry(settings, stats, ledger, redis)
    keys = KeyRing(settings.auth, redis, settings.redis.key_prefix)
    limiter = RateLimiter(redis, settings.redis.key_prefix)
    return Services(settings, gateway, stats, telemetry, keys, limiter, stores, semantic=semantic, redis=redis,
                    verification=build_verification(settings, gateway, ledger))


async def start_curated(settings: Settings, semantic: SemanticTier | None,
                        stores: dict[str, GuardedStore]) -> CuratedLibrary | None:
    """Curated answers live beside the semantic tier (its store, embedder and decision)."""
    if semantic is None or not settings.cache.curated.enabled:
        return None
    library = build_library(settings, semantic, stores["semantic"])
    await library.start()
    return library


def build_telemetry(settings: Settings, stats: Stats, ledger: Ledger, redis=None) -> Telemetry:
    """`redis`: the shared client (`build_parts.redis_client`); with it the figures are the fleet's."""
    local = MinuteSeries(settings.admin.series_minutes, flushed=redis is not None)
    fleet = RedisSeries(local, redis, settings.redis.key_prefix) if redis is not None else None
    telemetry = Telemetry(stats, PriceList.from_settings(settings), local, ledger, fleet)
    telemetry.routing_reference = next((m.name for m in settings.models if m.tier == "large"), None)
    telemetry.start_flushing(settings.admin.flush_interval_s)
    return telemetry


def router_embedder(settings: Settings, semantic: SemanticTier | None):
    """The learned router reads sentence embeddings: the semantic tier's embedder, or its own."""
    if settings.routing.policy != "learned":
        return None
    if semantic is not None:
        return semantic.embedder.embed
    from cachegate.cache.semantic.embedder import Embedder
    cfg = settings.cache.semantic.embedder
    return Embedder(cfg.model, cfg.max_batch, cfg.max_wait_ms).embed


async def start_semantic(settings: Settings, stores: dict[str, GuardedStore],
                         redis_health: StoreHealth, redis=None) -> SemanticTier | None:
    if not settings.cache.semantic.enabled:
        return None
    shared = redis_health if settings.cache.semantic.store == "redis" else None
    stores["semantic"] = build_semantic_store(settings, shared, redis)
    tier = build_semantic_tier(settings, stores["semantic"])
    await tier.start()
    return tier


async def build_engine_services(settings: Settings, backends: dict[str, Backend] | None = None) -> Services:
    """What an engine server needs: its model behind the same pipeline, keys and limits, and request telemetry;
    no cache tier, store, verification, curated library or answer log is built, whatever the settings say."""
    backends = await start_backends(settings, backends)
    stats, ledger = Stats(), Ledger()
    gateway = Gateway(backends, None, admission_policy(settings),
                      router=ModelRouter.from_settings(settings, routing_policy(settings.routing)))
    redis = redis_client(settings)
    return Services(settings, gateway, stats, build_telemetry(settings, stats, ledger, redis),
                    KeyRing(settings.auth, redis, settings.redis.key_prefix),
                    RateLimiter(redis, settings.redis.key_prefix), redis=redis)
