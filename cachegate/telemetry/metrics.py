"""Prometheus metrics of one gateway, in a registry of its own (so several apps can live in one
process, as the tests do). Counters and histograms move per request; gauges are refreshed on scrape."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS = (.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120)
SIMILARITY_BUCKETS = (.5, .6, .7, .75, .8, .85, .9, .925, .95, .975, .99, 1.0)


class Metrics:
    def __init__(self) -> None:
        self._bound: dict[tuple, object] = {}
        r = self.registry = CollectorRegistry()
        self.requests = Counter("cachegate_requests", "Requests by endpoint, cache outcome, route tier and status",
                                ["endpoint", "cache", "tier", "status"], registry=r)
        self.duration = Histogram("cachegate_request_duration_seconds", "Total time of a request, per outcome",
                                  ["endpoint", "cache"], buckets=LATENCY_BUCKETS, registry=r)
        self.ttft = Histogram("cachegate_time_to_first_token_seconds", "Time to the first token, per outcome",
                              ["endpoint", "cache"], buckets=LATENCY_BUCKETS, registry=r)
        self.tokens = Counter("cachegate_tokens", "Tokens served by a backend (served) or by a cache hit (saved)",
                              ["kind", "model"], registry=r)
        self.cost = Counter("cachegate_cost", "Money spent on backends (spent) and saved by cache hits (saved)",
                            ["kind", "model"], registry=r)
        self.similarity = Histogram("cachegate_semantic_hit_similarity", "Cosine similarity of semantic hits",
                                    buckets=SIMILARITY_BUCKETS, registry=r)
        self.routing_saved = Counter("cachegate_routing_saved", "Money the router saved by sending a request "
                                     "to a cheaper model than the large tier's (estimate)", ["model"], registry=r)
        self.routes = Counter("cachegate_routes", "Answers by routed tier, answering model and fallback",
                              ["tier", "model", "fallback"], registry=r)
        self.hit_ratio = Gauge("cachegate_hit_ratio", "Share of answered requests served by a tier (or any)",
                               ["tier"], registry=r)
        self.store_entries = Gauge("cachegate_store_entries", "Entries per store", ["store"], registry=r)
        self.store_bytes = Gauge("cachegate_store_bytes", "Bytes per store", ["store"], registry=r)
        self.cache_faults = Gauge("cachegate_cache_faults", "Answers served but not stored because a store "
                                  "failed (store_errors), corrupt entries dropped (exact_corrupt, "
                                  "semantic_corrupt)", ["kind"], registry=r)
        self.false_hit_rate = Gauge("cachegate_false_hit_rate", "Semantic false-hit rate per namespace, measured "
                                    "by shadow checks and feedback since its decision last changed: estimate, "
                                    "upper_bound (Wilson 95%) and target", ["namespace", "kind"], registry=r)
        self.verified = Gauge("cachegate_verified_hits", "Semantic hits judged, per namespace, source (shadow, "
                              "feedback) and verdict", ["namespace", "source", "verdict"], registry=r)
        self.store_up = Gauge("cachegate_store_up", "1 when the store answers", ["store"], registry=r)
        self.backend_up = Gauge("cachegate_backend_up", "1 when the replica's circuit is not open",
                                ["model", "replica"], registry=r)
        self.backend_outstanding = Gauge("cachegate_backend_outstanding", "Requests in flight per replica",
                                         ["model", "replica"], registry=r)
        self.kv_blocks_used = Gauge("cachegate_engine_kv_blocks_in_use", "Engine KV blocks in use", ["model"],
                                    registry=r)
        self.kv_blocks_total = Gauge("cachegate_engine_kv_blocks_total", "Engine KV blocks in the pool", ["model"],
                                     registry=r)
        self.prefix_hit_rate = Gauge("cachegate_engine_prefix_hit_rate",
                                     "Reused prompt tokens / prompt tokens", ["model"], registry=r)
        self.engine_requests = Gauge("cachegate_engine_requests", "Engine requests by state", ["model", "state"],
                                     registry=r)

    def bound(self, metric, *labels: str):
        """`metric.labels(*labels)`, looked up once per label set (the per-request path calls it often)."""
        key = (id(metric), labels)
        child = self._bound.get(key)
        if child is None:
            child = self._bound[key] = metric.labels(*labels)
        return child
