"""Admission and expiry: which answers a cache tier stores, and for how long.

Errors never reach this point. Truncated answers (`finish_reason == "length"`) are kept only when the
config says so, empty answers never. A TTL is the shortest of the tier's, the namespace's and the request's.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AdmissionPolicy:
    store_truncated: bool = False
    ttl_s: float = 3600.0
    namespace_ttl_s: dict[str, float] = field(default_factory=dict)

    def admits(self, text: str, finish_reason: str | None) -> bool:
        if finish_reason not in ("stop", "length"):
            return False
        if finish_reason == "length" and not self.store_truncated:
            return False
        return bool(text.strip())

    def ttl_for(self, requested_ttl_s: float | None = None, namespace: str | None = None,
                tier_ttl_s: float | None = None) -> float:
        limits = [tier_ttl_s or self.ttl_s, self.namespace_ttl_s.get(namespace or "", float("inf"))]
        if requested_ttl_s:
            limits.append(requested_ttl_s)
        return min(limits)
