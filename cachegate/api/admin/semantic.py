"""Admin routes of the semantic tier: its figures, one entry, and invalidation (by id, namespace, query).

Guarded like every admin route by the admin bearer token (`cachegate.api.admin.auth`).
"""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator

from cachegate.api.admin.auth import require_admin
from cachegate.api.state import services_of
from cachegate.cache.semantic.entry import id_text, parse_id
from cachegate.cache.semantic.tier import SemanticTier
from cachegate.errors import APIError, InvalidRequest

router = APIRouter(prefix="/admin/semantic")


class Invalidate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tenant: str = "default"
    namespace: str | None = None
    query: str | None = Field(None, min_length=1)
    min_similarity: float | None = Field(None, ge=-1, le=1)

    @model_validator(mode="after")
    def says_what(self) -> Invalidate:
        if self.namespace is None and self.query is None:
            raise ValueError("give a 'namespace', a 'query', or both")
        return self


def tier_of(http: Request) -> SemanticTier:
    require_admin(http)
    tier = services_of(http).semantic
    if tier is None:
        raise APIError("The semantic tier is disabled", code="semantic_disabled", status=404,
                       type="not_found_error")
    return tier


@router.get("")
async def figures(http: Request) -> dict[str, Any]:
    tier = tier_of(http)
    scopes = tier.catalog.scopes.values()
    return {"entries": len(tier.catalog), "bytes": tier.catalog.bytes, "scopes": len(tier.catalog.scopes),
            "approximate_scopes": sum(ix.kind == "ivf" for ix in scopes), "rebuilds": tier.catalog.rebuilds,
            "counts": dict(tier.counts), "embedder": {"batches": tier.embedder.batches,
                                                       "encoded": tier.embedder.encoded,
                                                       "precision": tier.embedder.precision},
            "store": "up" if tier.entries.reachable else "down",
            "synced": None if tier.follower is None else tier.follower.synced.is_set()}


@router.get("/entries/{entry}")
async def entry(http: Request, entry: str) -> dict[str, Any]:
    tier = tier_of(http)
    found = await tier.entries.get(_id(entry))
    if found is None:
        raise APIError(f"No semantic entry {entry}", status=404, type="not_found_error", code="entry_not_found")
    return found.summary() | {"hits": await tier.entries.hits(found.id), "answer": found.answer.text}


@router.delete("/entries/{entry}")
async def delete_entry(http: Request, entry: str) -> dict[str, Any]:
    tier = tier_of(http)
    entry_id = _id(entry)
    existed = entry_id in tier.catalog or await tier.entries.get(entry_id) is not None
    await tier.delete([entry_id])
    return {"deleted": [entry] if existed else []}


@router.post("/invalidate")
async def invalidate(http: Request) -> dict[str, Any]:
    tier = tier_of(http)
    from cachegate.api.translate import parse_body
    body: Invalidate = parse_body(await http.body(), Invalidate)
    if body.query is not None:
        ids = await tier.invalidate_similar(body.tenant, body.query, body.namespace, body.min_similarity)
    else:
        ids = await tier.invalidate_namespace(body.tenant, body.namespace)
    return {"deleted": [id_text(i) for i in ids]}


def _id(text: str) -> int:
    try:
        return parse_id(text)
    except ValueError:
        raise InvalidRequest(f"'{text}' is not an entry id (16 hex digits)", param="entry") from None
