"""HTTP routes of the OpenAI-compatible API. Thin: parse, call the pipeline, shape the response.

Every request gets an id (`x-request-id`, also the response's `id`); errors are OpenAI-shaped, and what
a backend failure says about internal hosts goes to the log under that id, never to the client.
"""
from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from typing import Any

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from cachegate.access.auth import Principal
from cachegate.access.ratelimit import Reservation
from cachegate.api.guards import read_body, require_json
from cachegate.api.limits import check_limits, token_estimate
from cachegate.api.openapi import (
    CHAT_ROUTE,
    COMPLETIONS_ROUTE,
    FEEDBACK_ROUTE,
    Health,
    ModelList,
    ModelObject,
)
from cachegate.api.request_memo import Parsed
from cachegate.api.responses import Answer, Envelope, collect, response_id, sse, whole
from cachegate.api.schema import CacheFeedback
from cachegate.api.state import memo_of, services_of
from cachegate.api.translate import ENDPOINT_SCHEMAS, parse_body, to_backend_request
from cachegate.backends.base import Chunk
from cachegate.build import Services
from cachegate.cache.controls import controls_of
from cachegate.errors import APIError, ModelNotFound, server_error
from cachegate.pipeline import Outcome
from cachegate.telemetry.health import export, health
from cachegate.telemetry.report import report
from cachegate.telemetry.stats import SAVED

log = logging.getLogger(__name__)
router = APIRouter()
TENANT_HEADER = "x-cachegate-tenant"     # honoured only from a trusted gateway's key (engine servers)


async def chat_completions(http: Request) -> Response:
    return await complete(http, "chat")


async def completions(http: Request) -> Response:
    return await complete(http, "completions")




@router.get("/v1/models", response_model=ModelList)
async def list_models(http: Request) -> dict[str, Any]:
    services = services_of(http)
    return {"object": "list", "data": [model_object(services, name) for name in services.gateway.backends]}


@router.get("/v1/models/{model_id:path}", response_model=ModelObject,
            responses={404: {"description": "No such model"}})
async def retrieve_model(http: Request, model_id: str) -> dict[str, Any]:
    services = services_of(http)
    if model_id not in services.gateway.backends:
        raise ModelNotFound(model_id)
    return model_object(services, model_id)


def model_object(services: Services, name: str) -> dict[str, Any]:
    info = services.gateway.backends[name].info
    return {"id": info.name, "object": "model", "created": services.started, "owned_by": info.owned_by,
            "tier": info.tier, "max_context": info.max_context}


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}})
async def metrics(http: Request) -> Response:
    """Prometheus exposition; gauges (hit ratios, stores, replicas, engines) are refreshed per scrape."""
    services = services_of(http)
    telemetry = services.telemetry
    export(telemetry.metrics, await health(services), report(await telemetry.window())["totals"])
    return Response(generate_latest(telemetry.metrics.registry), media_type=CONTENT_TYPE_LATEST)


@router.get("/healthz", response_model=Health)
async def healthz(http: Request) -> dict[str, Any]:
    services = services_of(http)
    stores = {name: ("up" if store.healthy else "down") for name, store in services.stores.items()}
    status = "ok" if all(v == "up" for v in stores.values()) else "degraded"
    return {"status": status, "models": list(services.gateway.backends), "stores": stores}


async def cache_feedback(http: Request) -> Response:
    """A client's verdict on an answer it got from the cache: a wrong one is invalidated and counted."""
    services = services_of(http)
    try:
        principal = await services.keys.authenticate(http.headers.get("authorization"))
        require_json(http)
        body = parse_body(await read_body(http, 4096, services.settings.server.body_timeout_s), CacheFeedback)
        if services.verification is None:
            raise APIError("The semantic tier is disabled: there is no cached answer to judge", status=404,
                           type="not_found_error", param="id", code="unknown_response")
        verdict = await services.verification.feedback(tenant_of(http, principal), body.id, body.good)
    except APIError as exc:
        return exc.response()
    return Response(orjson.dumps(verdict), media_type="application/json")


async def complete(http: Request, kind: str) -> Response:
    services = services_of(http)
    record = services.telemetry.start(kind)
    request_id = os.urandom(16).hex()
    reservation: Reservation | None = None
    try:
        principal = await services.keys.authenticate(http.headers.get("authorization"))
        require_json(http)
        read = await parsed(services, http, kind)
        body = read.body
        reservation = await services.limiter.admit(principal, *read.estimate)
        request = read.request_for(tenant_of(http, principal), request_id)
        controls = controls_of(body.cache, http.headers.get("cache-control"))
        outcome = await services.gateway.serve(kind, request, controls, stream=body.stream)
        services.telemetry.routed(record, outcome, request)
        if outcome.answer is not None and services.verification is not None:
            services.verification.after_hit(response_id(kind, request_id), request, outcome, controls.namespace,
                                            record.question)
        if outcome.answer is not None and not body.stream:
            return await whole_hit(services, record, reservation, kind, outcome, request_id)
        chunks = metered(services, record, reservation, outcome.cache, outcome.chunks)
        replayed = outcome.answer is not None and services.gateway.policy.pacing == "none"
        return await shape(kind, outcome, chunks, body.stream, body.include_usage, request_id, replayed)
    except APIError as exc:
        if exc.public(request_id) is not exc:
            log.warning("request %s: %s", request_id, exc.message)
        return await failed(services, record, reservation, exc.public(request_id), request_id)
    except Exception:  # noqa: BLE001 - anything unexpected is a counted, generic 500
        log.exception("request %s failed", request_id)
        return await failed(services, record, reservation, server_error(request_id), request_id)


async def parsed(services: Services, http: Request, kind: str) -> Parsed:
    """The validated body, its token estimate and backend request; a body seen byte for byte before is
    not parsed again."""
    server = services.settings.server
    raw = await read_body(http, server.max_body_bytes, server.body_timeout_s)
    memo = memo_of(http)
    known = memo.get(kind, raw)
    if known is not None:
        return known
    body = parse_body(raw, ENDPOINT_SCHEMAS[kind])
    check_limits(body, services.settings.limits)
    read = Parsed(body, token_estimate(body), to_backend_request(body))
    memo.put(kind, raw, read)
    return read


async def failed(services: Services, record, reservation: Reservation | None, error: APIError,
                 request_id: str) -> Response:
    if reservation is not None:
        await services.limiter.settle(reservation, 0)
    services.telemetry.finish(record, error.status)
    return error.response(request_id)


def tenant_of(http: Request, principal: Principal) -> str:
    """The key's tenant; a trusted gateway's key (an engine server's) may name the tenant it serves."""
    named = http.headers.get(TENANT_HEADER)
    if principal.trusted_gateway and named and 0 < len(named) <= 128 and named.isprintable():
        return named
    return principal.tenant


async def metered(services: Services, record, reservation: Reservation, cache: str,
                  chunks: AsyncIterator[Chunk]) -> AsyncIterator[Chunk]:
    """Pass the answer through, noting it for telemetry; when it ends, however it ends, settle the key's
    tokens (the usage the backend reported, or what was produced before a stream was cut; nothing for a
    cached or shared answer) and finish the record."""
    usage, produced = None, 0
    try:
        async for chunk in chunks:
            services.telemetry.note(record, chunk)
            usage = chunk.usage or usage
            produced += bool(chunk.text or chunk.tool_calls)
            yield chunk
    except APIError as exc:
        record.status = exc.status
        raise
    except Exception:
        record.status = 500
        raise
    finally:
        await chunks.aclose()
        spent = 0 if cache in SAVED else usage.total_tokens if usage else reservation.prompt_tokens + produced
        await services.limiter.settle(reservation, spent)
        services.telemetry.finish(record)


async def whole_hit(services: Services, record, reservation: Reservation, kind: str, outcome: Outcome,
                    request_id: str) -> Response:
    """A cached answer to a client that does not stream: one JSON body, nothing to meter but the record."""
    cached = outcome.answer
    services.telemetry.note(record, Chunk(cached.text, cached.finish_reason, cached.usage))
    await services.limiter.settle(reservation, 0)
    services.telemetry.finish(record)
    answer = Answer(cached.text, cached.finish_reason, cached.usage, list(cached.tool_calls or []))
    envelope = Envelope(kind, outcome.route.answered_by or outcome.route.model, request_id)
    return Response(orjson.dumps(whole(envelope, answer)), media_type="application/json",
                    headers=headers_of(outcome, request_id))


def headers_of(outcome: Outcome, request_id: str) -> dict[str, str]:
    headers = {"x-cachegate-cache": outcome.cache, "x-cachegate-key": outcome.key,
               "x-cachegate-route": outcome.route.header(), "x-request-id": request_id}
    if outcome.similarity is not None:
        headers["x-cachegate-similarity"] = f"{outcome.similarity:.4f}"
        headers["x-cachegate-entry"] = outcome.entry_id or ""
    if outcome.shared:
        headers["x-cachegate-single-flight"] = "joined"
    return headers


async def shape(kind: str, outcome: Outcome, chunks: AsyncIterator[Chunk], stream: bool,
                include_usage: bool, request_id: str, replayed: bool = False) -> Response:
    """`replayed`: the whole answer is at hand (a cached one, unpaced): a stream is sent as one body."""
    headers = headers_of(outcome, request_id)
    envelope = Envelope(kind, outcome.route.answered_by or outcome.route.model, request_id)
    if not stream:
        answer = await collect(chunks)
        return Response(orjson.dumps(whole(envelope, answer)), media_type="application/json", headers=headers)
    events = sse(envelope, chunks, include_usage)
    headers["cache-control"] = "no-cache"
    if replayed:
        return Response(b"".join([event async for event in events]), media_type="text/event-stream",
                        headers=headers)
    return StreamingResponse(events, media_type="text/event-stream", headers=headers)


# The routes that read their raw body themselves (OpenAI-shaped errors, the request memo) are
# plain Starlette routes, without FastAPI's per-request dependency solving; `openapi.install`
# describes them from the same definitions.
BODY_ROUTES = {"/v1/chat/completions": (chat_completions, CHAT_ROUTE),
               "/v1/completions": (completions, COMPLETIONS_ROUTE),
               "/v1/cache/feedback": (cache_feedback, FEEDBACK_ROUTE)}
FEEDBACK_PATH = "/v1/cache/feedback"


def install_body_routes(app, feedback: bool = True) -> None:
    """The body routes first in the app's own route list: the hot path matches on its first try, without
    passing through an included router's scope bookkeeping (about 5% of an exact hit's time). `feedback`: with
    the cache feedback route (not on an engine server, which has no cache)."""
    from starlette.routing import Route
    for path, (endpoint, _) in reversed(BODY_ROUTES.items()):
        if path == FEEDBACK_PATH and not feedback:
            continue
        app.router.routes.insert(0, Route(path, endpoint, methods=["POST"], include_in_schema=False))
