"""HTTP routes of the OpenAI-compatible API. Thin: parse, call the pipeline, shape the response."""
from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from fastapi.responses import JSONResponse, Response, StreamingResponse

from cachegate.backends.base import Chunk
from cachegate.cache.controls import controls_of
from cachegate.errors import APIError, InvalidRequest
from cachegate.pipeline import Outcome
from cachegate.responses import Envelope, collect, sse, whole
from cachegate.auth import Principal
from cachegate.limits import check_limits
from cachegate.openapi import CHAT_ROUTE, COMPLETIONS_ROUTE, Health, ModelList
from cachegate.ratelimit import RateLimiter
from cachegate.services import Services
from cachegate.stats import HITS
from cachegate.telemetry.health import export, health
from cachegate.telemetry.report import report
from cachegate.translate import ENDPOINT_SCHEMAS, parse_body, to_backend_request

router = APIRouter()


@router.post("/v1/chat/completions", **CHAT_ROUTE)
async def chat_completions(http: Request) -> Response:
    return await complete(http, "chat")


@router.post("/v1/completions", **COMPLETIONS_ROUTE)
async def completions(http: Request) -> Response:
    return await complete(http, "completions")


@router.get("/v1/models", response_model=ModelList)
async def list_models(http: Request) -> dict[str, Any]:
    services: Services = http.app.state.services
    data = [{"id": b.info.name, "object": "model", "created": services.started, "owned_by": b.info.owned_by,
             "tier": b.info.tier, "max_context": b.info.max_context}
            for b in services.gateway.backends.values()]
    return {"object": "list", "data": data}


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}})
async def metrics(http: Request) -> Response:
    """Prometheus exposition; gauges (hit ratios, stores, replicas, engines) are refreshed per scrape."""
    services: Services = http.app.state.services
    telemetry = services.telemetry
    export(telemetry.metrics, await health(services), report(await telemetry.window())["totals"])
    return Response(generate_latest(telemetry.metrics.registry), media_type=CONTENT_TYPE_LATEST)


@router.get("/healthz", response_model=Health)
async def healthz(http: Request) -> dict[str, Any]:
    services: Services = http.app.state.services
    stores = {name: ("up" if store.healthy else "down") for name, store in services.stores.items()}
    status = "ok" if all(v == "up" for v in stores.values()) else "degraded"
    return {"status": status, "models": list(services.gateway.backends), "stores": stores}


async def complete(http: Request, kind: str) -> Response:
    services: Services = http.app.state.services
    record = services.telemetry.start(kind)
    try:
        principal = await services.keys.authenticate(http.headers.get("authorization"))
        await services.limiter.admit(principal)
        body = parse_body(await read_body(http, services.settings.server.max_body_bytes), ENDPOINT_SCHEMAS[kind])
        check_limits(body, services.settings.limits)
        request = to_backend_request(body, tenant=principal.tenant)
        controls = controls_of(body.cache, http.headers.get("cache-control"))
        outcome = await services.gateway.serve(kind, request, controls)
        services.telemetry.routed(record, outcome, request)
        chunks = charge(services.limiter, principal, outcome.cache, outcome.chunks)
        chunks = services.telemetry.observe(record, chunks)
        return await shape(kind, outcome, chunks, body.stream, body.include_usage)
    except APIError as exc:
        services.telemetry.finish(record, exc.status)
        return exc.response()


async def charge(limiter: RateLimiter, principal: Principal, cache: str,
                 chunks: AsyncIterator[Chunk]) -> AsyncIterator[Chunk]:
    """Charge the key for the tokens a backend produced (cache hits are free)."""
    try:
        async for chunk in chunks:
            if chunk.usage is not None and cache not in HITS:
                await limiter.charge_tokens(principal, chunk.usage.total_tokens)
            yield chunk
    finally:
        await chunks.aclose()


async def shape(kind: str, outcome: Outcome, chunks: AsyncIterator[Chunk], stream: bool,
                include_usage: bool) -> Response:
    route = outcome.route
    headers = {"x-cachegate-cache": outcome.cache, "x-cachegate-key": outcome.key,
               "x-cachegate-route": route.header()}
    if outcome.similarity is not None:
        headers["x-cachegate-similarity"] = f"{outcome.similarity:.4f}"
        headers["x-cachegate-entry"] = outcome.entry_id or ""
    if outcome.shared:
        headers["x-cachegate-single-flight"] = "joined"
    envelope = Envelope(kind, route.answered_by or route.model)
    if stream:
        return StreamingResponse(sse(envelope, chunks, include_usage), media_type="text/event-stream",
                                 headers=headers | {"cache-control": "no-cache"})
    answer = await collect(chunks)
    return JSONResponse(whole(envelope, answer), headers=headers)


async def read_body(http: Request, limit: int) -> bytes:
    declared = http.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise InvalidRequest(f"The request body is larger than {limit} bytes", code="request_too_large",
                             status=413)
    raw = await http.body()
    if len(raw) > limit:
        raise InvalidRequest(f"The request body is larger than {limit} bytes", code="request_too_large",
                             status=413)
    return raw
