"""The figures the dashboard and `cachegate stats` show, from a window of minute buckets (this
replica's, or the fleet's through Redis): totals, hit rates, latency percentiles, savings, routing."""
from __future__ import annotations

from collections import Counter
from typing import Any

from cachegate.telemetry.histogram import merge, percentile

OUTCOMES = ("hit-exact", "hit-curated", "hit-semantic", "joined", "miss", "bypass", "error")
ANSWERED = OUTCOMES[:-1]
HIT_OUTCOMES = ("hit-exact", "hit-curated", "hit-semantic")
GROUPS = {"hit": HIT_OUTCOMES, "miss": ("miss", "bypass", "joined")}   # joined waits like a miss


def histogram(counts: Counter, kind: str, outcomes: tuple[str, ...]) -> dict[int, int]:
    parts = []
    for field, n in counts.items():
        name, _, rest = field.partition(":")
        outcome, _, bucket = rest.rpartition(":")
        if name == kind and outcome in outcomes:
            parts.append({int(bucket): int(n)})
    return merge(parts)


def percentiles(counts: Counter, kind: str) -> dict[str, dict[str, float | None]]:
    out = {}
    for group, outcomes in GROUPS.items():
        h = histogram(counts, kind, outcomes)
        out[group] = {f"p{q}": percentile(h, q / 100) for q in (50, 95, 99)} | {"count": sum(h.values())}
    return out


def rates(counts: Counter) -> dict[str, float]:
    answered = sum(counts.get(f"req:{o}", 0) for o in ANSWERED)
    exact, semantic = counts.get("req:hit-exact", 0), counts.get("req:hit-semantic", 0)
    curated = counts.get("req:hit-curated", 0)
    share = (lambda n: round(n / answered, 4) if answered else 0.0)
    return {"hit_rate": share(exact + curated + semantic), "exact_hit_rate": share(exact),
            "curated_hit_rate": share(curated), "semantic_hit_rate": share(semantic),
            "joined_rate": share(counts.get("req:joined", 0))}


def summary(counts: Counter) -> dict[str, Any]:
    return {
        "requests": int(sum(counts.get(f"req:{o}", 0) for o in OUTCOMES)),
        "by_cache": {o: int(counts.get(f"req:{o}", 0)) for o in OUTCOMES},
        **rates(counts),
        "tokens_saved": int(counts.get("tokens_saved", 0)), "cost_saved": round(counts.get("cost_saved", 0.0), 6),
        "tokens_served": int(counts.get("tokens_served", 0)), "cost": round(counts.get("cost", 0.0), 6),
        "routing_cost_saved": round(counts.get("routing_saved", 0.0), 6),      # auto sent it to a cheaper model
        "routes": {f.split(":", 1)[1]: int(n) for f, n in counts.items() if f.startswith("route:")},
        "latency_ms": percentiles(counts, "lat"),
        "ttft_ms": percentiles(counts, "ttft"),
    }


def series(window: list[tuple[int, Counter]]) -> list[dict[str, Any]]:
    out = []
    for minute, counts in window:
        lat = percentiles(counts, "lat")
        out.append({"minute": minute * 60, **{o: int(counts.get(f"req:{o}", 0)) for o in OUTCOMES},
                    **rates(counts), "tokens_saved": int(counts.get("tokens_saved", 0)),
                    "cost_saved": round(counts.get("cost_saved", 0.0), 6),
                    "p50_hit_ms": lat["hit"]["p50"], "p95_hit_ms": lat["hit"]["p95"], "p99_hit_ms": lat["hit"]["p99"],
                    "p50_miss_ms": lat["miss"]["p50"], "p95_miss_ms": lat["miss"]["p95"],
                    "p99_miss_ms": lat["miss"]["p99"]})
    return out


def report(window: list[tuple[int, Counter]]) -> dict[str, Any]:
    total: Counter = Counter()
    for _, counts in window:
        total.update(counts)
    return {"totals": summary(total), "series": series(window)}
