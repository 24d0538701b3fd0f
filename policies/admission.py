"""Admission and expiry: which answers a cache tier stores, and for how long.

Errors never reach this point; empty answers are never kept (an answer that is only tool calls is not
empty). Truncated answers (`finish_reason == "length"`) are kept unless the config says otherwise: a
cut answer serves only requests whose `max_tokens` is at most its own (the caller's `fit`). A TTL is
the shortest of the tier's, the namespace's and the request's.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AdmissionPolicy:
    store_truncated: bool = True            # semantic tier
    exact_stores_truncated: bool = True
    ttl_s: float = 3600.0
    namespace_ttl_s: dict[str, float] = field(default_factory=dict)

    def admits(self, answer, tier: str = "semantic") -> bool:
        """`answer`: anything with `text`, `finish_reason` and `tool_calls` (a `CachedAnswer`)."""
        finish_reason = answer.finish_reason
        if finish_reason not in ("stop", "length", "tool_calls"):
            return False
        if not answer.text.strip() and not answer.tool_calls:
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
