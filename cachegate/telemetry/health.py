"""Health of what the gateway depends on: stores (up, entries, bytes), every replica of every model
(circuit, requests in flight) and in-process engines (running, waiting, KV blocks, prefix reuse)."""
from __future__ import annotations

from typing import Any

from cachegate.telemetry.metrics import Metrics


async def stores_health(stores: dict) -> dict[str, dict[str, Any]]:
    out = {}
    for name, store in stores.items():
        stats = await store.stats()
        out[name] = {"up": store.healthy, "entries": getattr(stats, "entries", None),
                     "bytes": getattr(stats, "bytes", None)}
    return out


def replicas_health(backends: dict) -> list[dict[str, Any]]:
    """One row per replica, named as the config names it (`model#i`), never by its URL."""
    out = []
    for model, backend in backends.items():
        for i, replica in enumerate(getattr(backend, "replicas", [backend])):
            inner = getattr(replica, "backend", replica)
            breaker = getattr(replica, "breaker", None)
            row = {"model": model, "tier": backend.info.tier, "replica": f"{model}#{i}",
                   "up": getattr(replica, "available", True), "breaker": breaker.state if breaker else "closed",
                   "outstanding": getattr(replica, "outstanding", 0)}
            if hasattr(inner, "engine_stats"):
                row["engine"] = inner.engine_stats()
            out.append(row)
    return out


async def health(services) -> dict[str, Any]:
    stores = await stores_health(services.stores)
    gateway = services.gateway
    tier = gateway.semantic
    if tier is not None and "semantic" in stores:      # entries as the tier counts them (not hit counters)
        stores["semantic"] |= {"entries": len(tier.catalog), "bytes": tier.catalog.bytes}
    faults = {"store_errors": services.stats.store_errors,
              "exact_corrupt": gateway.exact.corrupt if gateway.exact is not None else 0,
              "semantic_corrupt": tier.entries.corrupt if tier is not None else 0}
    out = {"stores": stores, "backends": replicas_health(gateway.backends), "faults": faults}
    if services.verification is not None:
        out["verification"] = services.verification.view()
    return out


def export(metrics: Metrics, state: dict[str, Any], totals: dict[str, Any]) -> None:
    """Set the scrape-time gauges from a health snapshot and the window's totals."""
    for tier, key in (("exact", "exact_hit_rate"), ("curated", "curated_hit_rate"), ("semantic", "semantic_hit_rate"),
                      ("any", "hit_rate")):
        metrics.hit_ratio.labels(tier).set(totals[key])
    for kind, count in state.get("faults", {}).items():
        metrics.cache_faults.labels(kind).set(count)
    verification = state.get("verification") or {}
    for namespace, v in verification.get("namespaces", {}).items():
        for kind, key in (("estimate", "false_hit_rate"), ("upper_bound", "upper_bound"), ("target", "target")):
            metrics.false_hit_rate.labels(namespace, kind).set(v[key])
    for row in verification.get("verdicts", []):
        metrics.verified.labels(row["namespace"], row["source"], row["verdict"]).set(row["count"])
    for name, s in state["stores"].items():
        metrics.store_up.labels(name).set(1 if s["up"] else 0)
        if s["entries"] is not None:
            metrics.store_entries.labels(name).set(s["entries"])
            metrics.store_bytes.labels(name).set(s["bytes"])
    for row in state["backends"]:
        labels = (row["model"], row["replica"])
        metrics.backend_up.labels(*labels).set(1 if row["up"] else 0)
        metrics.backend_outstanding.labels(*labels).set(row["outstanding"])
        engine = row.get("engine") or {}
        for state_name in ("running", "waiting"):
            if state_name in engine:
                metrics.engine_requests.labels(row["model"], state_name).set(engine[state_name])
        for key, gauge in (("kv_blocks_in_use", metrics.kv_blocks_used), ("kv_blocks_total", metrics.kv_blocks_total),
                           ("prefix_hit_rate", metrics.prefix_hit_rate)):
            if key in engine:
                gauge.labels(row["model"]).set(engine[key])
