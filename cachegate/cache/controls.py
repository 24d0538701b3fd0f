"""Per-request cache controls: the `Cache-Control` header and the body field `cache` (as LiteLLM takes it).

`no-cache` skips lookups but still stores, `no-store` never stores, `max-age`/`s-maxage` bound the age of
an answer served from cache, `ttl` bounds how long this answer is kept, `namespace` partitions the cache.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cachegate.errors import InvalidRequest

DEFAULT_NAMESPACE = "default"
WHOLE_SECONDS = re.compile(r"[0-9]{1,12}")      # ASCII digits only: "¹".isdigit() is True


@dataclass(frozen=True)
class CacheControls:
    no_cache: bool = False
    no_store: bool = False
    ttl_s: float | None = None
    max_age_s: float | None = None
    namespace: str = DEFAULT_NAMESPACE

    @property
    def lookup(self) -> bool:
        return not self.no_cache and self.max_age_s != 0

    @property
    def shareable(self) -> bool:
        """May join (or lead) a single-flight call: it would take a cached answer and store its own."""
        return self.lookup and not self.no_store


def parse_cache_control(header: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for directive in (header or "").split(","):
        name, _, value = directive.strip().partition("=")
        name = name.strip().lower()
        if name in ("no-cache", "no-store"):
            out[name.replace("-", "_")] = True
        elif name in ("max-age", "s-maxage"):
            out["max_age_s"] = _seconds(value.strip().strip('"'), name)
    return out


def _seconds(value: str, name: str) -> float:
    if not WHOLE_SECONDS.fullmatch(value):
        raise InvalidRequest(f"Invalid Cache-Control directive '{name}={value}': expected whole seconds",
                             param="Cache-Control", code="invalid_value")
    return float(value)


def controls_of(body_cache: Any, header: str | None) -> CacheControls:
    """Header and body together; the stricter wins where both speak (no-cache, no-store, shorter ages)."""
    fields = parse_cache_control(header)
    if body_cache is not None:
        body = body_cache.model_dump(exclude_none=True)
        fields["no_cache"] = fields.get("no_cache", False) or body.get("no_cache", False)
        fields["no_store"] = fields.get("no_store", False) or body.get("no_store", False)
        for key in ("ttl_s", "max_age_s"):
            if key in body:
                fields[key] = min(body[key], fields.get(key, body[key]))
        if "namespace" in body:
            fields["namespace"] = body["namespace"]
    return CacheControls(**fields)
