"""One engine as its own OpenAI-compatible server (`cachegate engine`): the gateway's public face (the same
routes, errors, streaming and usage, so the gateway's upstream backend speaks to it as to any OpenAI server)
over services with no cache wiring (`build_engine_services`), plus `GET /engine/stats`; no operators' pages."""
from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request

from cachegate.api.app import create_app
from cachegate.api.state import services_of
from cachegate.build import build_engine_services
from cachegate.settings import Settings


def create_engine_app(settings: Settings) -> FastAPI:
    app = create_app(settings, build=build_engine_services, operators=False)
    app.add_api_route("/engine/stats", engine_stats, methods=["GET"], include_in_schema=False)
    return app


async def engine_stats(http: Request) -> dict[str, Any]:
    """The engine's own figures per model: KV blocks, prefix hit rate, running and waiting requests, ..."""
    backends = services_of(http).gateway.backends
    return {name: [getattr(r, "backend", r).engine_stats() for r in getattr(b, "replicas", [b])
                   if hasattr(getattr(r, "backend", r), "engine_stats")]
            for name, b in backends.items()}
