"""Admission and expiry: which answers a cache tier stores, and for how long.

Errors never reach this point; empty answers are never kept. Truncated answers (`finish_reason ==
"length"`) are kept by the exact tier, whose key holds `max_tokens` (the same request would be cut at
the same place again), and by the semantic tier only when the config says so: a paraphrase may ask
for a longer answer. A TTL is the shortest of the tier's, the namespace's and the request's.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AdmissionPolicy:
    store_truncated: bool = False           # semantic tier
    exact_stores_truncated: bool = True
    ttl_s: float = 3600.0
    namespace_ttl_s: dict[str, float] = field(default_factory=dict)

    def admits(self, text: str, finish_reason: str | None, tier: str = "semantic") -> bool:
        if finish_reason not in ("stop", "length") or not text.strip():
            return False
        if finish_reason == "length":
            return self.exact_stores_truncated if tier == "exact" else self.store_truncated
        return True

    def ttl_for(self, requested_ttl_s: float | None = None, namespace: str | None = None,
                tier_ttl_s: float | None = None) -> float:
        limits = [tier_ttl_s or self.ttl_s, self.namespace_ttl_s.get(namespace or "", float("inf"))]
        if requested_ttl_s:
            limits.append(requested_ttl_s)
        return min(limits)
