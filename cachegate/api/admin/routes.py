"""The admin API the dashboard uses: figures (`/admin/api/stats`), entry search, invalidating one
entry, purging a tenant or namespace, and changing a namespace's semantic threshold. Every route
requires the admin bearer token."""
from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator

from cachegate.api.admin.auth import require_admin
from cachegate.api.state import services_of
from cachegate.api.translate import parse_body
from cachegate.build import Services
from cachegate.cache.semantic.entry import parse_id
from cachegate.errors import APIError, InvalidRequest
from cachegate.telemetry.health import health
from cachegate.telemetry.report import report

router = APIRouter(prefix="/admin/api")
EXACT_KEY = re.compile(r"^[0-9a-f]{64}$")
SEMANTIC_ID = re.compile(r"^[0-9a-f]{16}$")


class Purge(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tenant: str = Field(min_length=1)
    namespace: str | None = Field(None, min_length=1)


class Threshold(BaseModel):
    model_config = ConfigDict(extra="forbid")
    namespace: str = Field(min_length=1)
    threshold: float | None = Field(None, ge=-1, le=1)                  # cosine policy
    target_false_hit_rate: float | None = Field(None, gt=0, lt=1)       # calibrated policy

    @model_validator(mode="after")
    def one_value(self) -> Threshold:
        if (self.threshold is None) == (self.target_false_hit_rate is None):
            raise ValueError("give exactly one of 'threshold' (cosine policy) or 'target_false_hit_rate'")
        return self


def operators_services(http: Request) -> Services:
    """The services, for a request that carries the admin token (else 401)."""
    require_admin(http)
    return services_of(http)


@router.get("/stats")
async def stats(http: Request) -> dict[str, Any]:
    services = operators_services(http)
    telemetry = services.telemetry
    out = report(await telemetry.window()) | await health(services)
    out["top_entries"] = services.telemetry.ledger.top(20)
    out["recent_misses"] = services.telemetry.ledger.recent_misses(20)
    out["semantic_policy"] = policy_view(services)
    out["scope"] = "fleet" if telemetry.fleet else "replica"
    return out


@router.get("/entries")
async def search(http: Request, q: str = "", limit: int = 50) -> dict[str, Any]:
    services = operators_services(http)
    ledger = services.telemetry.ledger
    return {"entries": ledger.search(q, limit) if q else ledger.top(limit)}


@router.delete("/entries/{key}")
async def invalidate(http: Request, key: str) -> dict[str, Any]:
    services = operators_services(http)
    gateway = services.gateway
    if EXACT_KEY.match(key) and gateway.exact is not None:
        deleted = await gateway.exact.delete(key)
    elif SEMANTIC_ID.match(key) and gateway.semantic is not None:
        deleted = bool(await gateway.semantic.delete([parse_id(key)]))
    else:
        raise InvalidRequest(f"'{key}' is neither an exact key (64 hex) nor a semantic entry id (16 hex)",
                             param="key")
    services.telemetry.ledger.forget(key)
    return {"deleted": key if deleted else None}


@router.post("/purge")
async def purge(http: Request) -> dict[str, Any]:
    services = operators_services(http)
    body: Purge = parse_body(await http.body(), Purge)
    gateway = services.gateway
    exact = await gateway.exact.purge(body.tenant, body.namespace) if gateway.exact is not None else 0
    semantic = 0
    if gateway.semantic is not None:
        fields = {"tenant": body.tenant} | ({"namespace": body.namespace} if body.namespace else {})
        semantic = len(await gateway.semantic.delete(gateway.semantic.catalog.ids_where(**fields)))
    services.telemetry.ledger.forget_where(body.tenant, body.namespace)
    return {"exact": exact, "semantic": semantic}


@router.post("/thresholds")
async def set_threshold(http: Request) -> dict[str, Any]:
    services = operators_services(http)
    body: Threshold = parse_body(await http.body(), Threshold)
    tier = services.gateway.semantic
    if tier is None:
        raise APIError("The semantic tier is disabled", status=404, type="not_found_error", code="semantic_disabled")
    policy = tier.policy
    value = getattr(body, policy.knob)        # the policy says what a namespace's setting is
    if value is None:
        raise InvalidRequest(f"the semantic policy is {type(policy).__name__}: set '{policy.knob}'",
                             param=policy.knob)
    tier.policy = policy.with_threshold(body.namespace, value)
    return policy_view(services)


def policy_view(services: Services) -> dict[str, Any] | None:
    tier = services.gateway.semantic
    return None if tier is None else tier.policy.view()
