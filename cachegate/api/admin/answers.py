"""The admin API of curated answers (the dashboard and `cachegate answers` use it): list and search with
their hits, read one, create or replace one, import many (idempotent), export all, delete one. Every route
requires the admin bearer token."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from cachegate.api.admin.auth import require_admin
from cachegate.api.state import services_of
from cachegate.api.translate import parse_body
from cachegate.cache.curated.library import CuratedLibrary
from cachegate.cache.curated.records import CuratedAnswer, write_jsonl
from cachegate.errors import APIError, InvalidRequest

router = APIRouter(prefix="/admin/api/answers")


class Import(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answers: list[CuratedAnswer] = Field(max_length=10_000)


def library_of(http: Request) -> CuratedLibrary:
    require_admin(http)
    library = services_of(http).gateway.curated
    if library is None:
        raise APIError("Curated answers are disabled (they need the semantic tier and cache.curated.enabled)",
                       status=404, type="not_found_error", code="curated_disabled")
    return library


@router.get("")
async def list_answers(http: Request, q: str = "", limit: int = 50) -> dict[str, Any]:
    return {"answers": await library_of(http).search(q, max(1, min(limit, 1000)))}


@router.get("/export")
async def export_answers(http: Request) -> Response:
    return Response(write_jsonl(await library_of(http).all()), media_type="application/x-ndjson")


@router.post("")
async def import_answers(http: Request) -> dict[str, Any]:
    library = library_of(http)
    body: Import = parse_body(await http.body(), Import)
    outcomes = [await library.put(answer) for answer in body.answers]
    return {outcome: outcomes.count(outcome) for outcome in ("created", "updated", "unchanged")}


@router.get("/{answer_id}")
async def get_answer(http: Request, answer_id: str) -> dict[str, Any]:
    library = library_of(http)
    answer = await library.get(answer_id)
    if answer is None:
        raise APIError(f"No curated answer '{answer_id}'", status=404, type="not_found_error", code="unknown_answer")
    return answer.view(library.hits[answer.id])


@router.put("/{answer_id}")
async def put_answer(http: Request, answer_id: str) -> dict[str, Any]:
    library = library_of(http)
    answer: CuratedAnswer = parse_body(await http.body(), CuratedAnswer)
    if answer.id != answer_id:
        raise InvalidRequest(f"The body's id '{answer.id}' is not the path's '{answer_id}'", param="id")
    return {"id": answer_id, "result": await library.put(answer)}


@router.delete("/{answer_id}")
async def delete_answer(http: Request, answer_id: str) -> dict[str, Any]:
    return {"id": answer_id, "deleted": await library_of(http).delete(answer_id)}
