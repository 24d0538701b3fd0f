"""The report of a run, from its results alone: throughput, latency and TTFT percentiles per outcome,
hit rate per tier, false hits, tokens and cost saved, effective tokens per second, errors by kind,
the workload's budget share, and a timeline for the plots."""
from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from loadtests.loadgen.falsehits import judge
from loadtests.loadgen.result import HIT_OUTCOMES, OUTCOMES, SAVED_OUTCOMES, Result


def percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "p99": None}
    p = np.percentile(np.asarray(values, dtype=float), [50, 95, 99])
    return {"p50": round(float(p[0]), 1), "p95": round(float(p[1]), 1), "p99": round(float(p[2]), 1)}


def share(part: float, whole: float) -> float:
    return round(part / whole, 4) if whole else 0.0


def per_outcome(answered: list[Result], wall_s: float) -> dict[str, Any]:
    out = {}
    for outcome in OUTCOMES + tuple(sorted({r.outcome for r in answered} - set(OUTCOMES))):
        group = [r for r in answered if r.outcome == outcome]
        out[outcome] = {"count": len(group), "throughput_rps": round(len(group) / wall_s, 3) if wall_s else 0.0,
                        "latency_ms": percentiles([r.latency_ms for r in group]),
                        "ttft_ms": percentiles([r.ttft_ms for r in group])}
    return out


def savings(answered: list[Result], price_in_per_1k: float, price_out_per_1k: float) -> dict[str, Any]:
    """Estimated from the usage cached answers carry: a hit (or a request that joined another's backend
    call) saves the tokens of the call it replaced."""
    hits = [r for r in answered if r.outcome in SAVED_OUTCOMES]
    prompt, completion = sum(r.prompt_tokens for r in hits), sum(r.completion_tokens for r in hits)
    cost = (prompt * price_in_per_1k + completion * price_out_per_1k) / 1000
    return {"tokens_saved": prompt + completion, "cost_saved": round(cost, 6), "savings_source": "estimate"}


def budget(answered: list[Result], budget_ms: float | None) -> dict[str, Any]:
    if budget_ms is None:
        return {"budget_ms": None, "within_budget": None}
    inside = sum(r.latency_ms <= budget_ms for r in answered)
    return {"budget_ms": budget_ms, "within_budget": share(inside, len(answered)),
            "within_budget_by_outcome": {o: share(sum(r.latency_ms <= budget_ms for r in answered if r.outcome == o),
                                                  sum(r.outcome == o for r in answered))
                                         for o in OUTCOMES if any(r.outcome == o for r in answered)}}


def ceiling(results: list[Result]) -> dict[str, float]:
    """What the request stream itself allowed, whatever the cache: the share of requests repeating an
    earlier one word for word (exact tier) or asking an already-asked intent in new words (semantic tier)."""
    asked: set[str] = set()
    labels: set[str] = set()
    exact = reworded = 0
    for r in sorted(results, key=lambda r: r.started_s):
        if r.asked in asked:
            exact += 1
        elif r.label in labels:
            reworded += 1
        asked.add(r.asked)
        labels.add(r.label)
    return {"exact_hit_rate": share(exact, len(results)), "hit_rate": share(exact + reworded, len(results))}


def summarize(results: list[Result], wall_s: float, budget_ms: float | None = None,
              price_in_per_1k: float = 0.0, price_out_per_1k: float = 0.0) -> dict[str, Any]:
    answered = [r for r in results if r.ok]
    counts = Counter(r.outcome for r in answered)
    exact, semantic, curated = counts["hit-exact"], counts["hit-semantic"], counts["hit-curated"]
    verdicts = judge(results)
    lat = percentiles([r.latency_ms for r in answered])
    ttft = percentiles([r.ttft_ms for r in answered])
    completion_tokens = sum(r.completion_tokens for r in answered)
    return {
        "requests": len(results), "answered": len(answered), "errors": len(results) - len(answered),
        "errors_by_kind": dict(Counter(r.error for r in results if not r.ok)),
        "by_outcome": {o: counts[o] for o in OUTCOMES} | {o: n for o, n in counts.items() if o not in OUTCOMES},
        "wall_s": round(wall_s, 2), "throughput_rps": round(len(answered) / wall_s, 3) if wall_s else 0.0,
        "hit_rate": share(exact + semantic + curated, len(answered)), "exact_hit_rate": share(exact, len(answered)),
        "semantic_hit_rate": share(semantic, len(answered)), "curated_hit_rate": share(curated, len(answered)),
        "joined_rate": share(counts["joined"], len(answered)),
        "ceiling": ceiling(results),
        "false_hits": verdicts.false, "false_hit_rate": round(verdicts.false_hit_rate, 4),
        "false_hits_by_tier": dict(verdicts.false_by_tier), "unverified_hits": verdicts.unverified,
        "ambiguous_answer_texts": verdicts.ambiguous_texts, "false_hit_examples": verdicts.examples,
        "p50_ms": lat["p50"], "p95_ms": lat["p95"], "p99_ms": lat["p99"],
        "ttft_p50_ms": ttft["p50"], "ttft_p95_ms": ttft["p95"], "ttft_p99_ms": ttft["p99"],
        "outcomes": per_outcome(answered, wall_s),
        **savings(answered, price_in_per_1k, price_out_per_1k),
        "completion_tokens": completion_tokens,
        "effective_tokens_per_s": round(completion_tokens / wall_s, 2) if wall_s else 0.0,
        "follow_ups": sum(r.follow_up for r in results),
        **budget(answered, budget_ms),
    }


def timeline(results: list[Result], wall_s: float, buckets: int = 30) -> list[dict[str, Any]]:
    """Per time bucket (by finish time): answers, hits per tier, hit rate, throughput."""
    width = max(wall_s / buckets, 1.0)
    rows = [{"t_s": round(i * width, 2), "answered": 0, "hit-exact": 0, "hit-curated": 0, "hit-semantic": 0,
             "errors": 0}
            for i in range(int(wall_s // width) + 1)]
    for r in results:
        row = rows[min(int(r.finished_s // width), len(rows) - 1)]
        if not r.ok:
            row["errors"] += 1
            continue
        row["answered"] += 1
        if r.outcome in HIT_OUTCOMES:
            row[r.outcome] += 1
    for row in rows:
        row["hit_rate"] = share(row["hit-exact"] + row["hit-curated"] + row["hit-semantic"], row["answered"])
        row["throughput_rps"] = round(row["answered"] / width, 3)
    return rows
