"""Admission: which answers a cache tier stores, and for how long.

Errors never reach this point. Truncated answers (`finish_reason == "length"`) are kept only when the
config says so, empty answers never.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AdmissionPolicy:
    store_truncated: bool = False
    ttl_s: float = 3600.0

    def admits(self, text: str, finish_reason: str | None) -> bool:
        if finish_reason not in ("stop", "length"):
            return False
        if finish_reason == "length" and not self.store_truncated:
            return False
        return bool(text.strip())

    def ttl_for(self, requested_ttl_s: float | None = None) -> float:
        return min(requested_ttl_s, self.ttl_s) if requested_ttl_s else self.ttl_s
