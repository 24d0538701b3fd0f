"""The FastAPI app factory: `create_app(settings)` builds a gateway; tests build their own."""
from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from cachegate.api import openapi
from cachegate.api.admin.answers import router as admin_answers
from cachegate.api.admin.page import router as admin_page
from cachegate.api.admin.routes import router as admin_api
from cachegate.api.admin.semantic import router as semantic_admin
from cachegate.api.guards import InFlightLimit
from cachegate.api.request_memo import RequestMemo
from cachegate.api.routes import BODY_ROUTES, FEEDBACK_PATH, install_body_routes, router
from cachegate.backends.base import Backend
from cachegate.build import Services, build_services
from cachegate.errors import APIError, error_body
from cachegate.settings import Settings

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, backends: dict[str, Backend] | None = None, *,
               build: Callable[..., Awaitable[Services]] = build_services, operators: bool = True) -> FastAPI:
    """`build` makes the services the routes use (app.state.services); `operators`: with the admin API, the
    dashboard and cache feedback (an engine server has none)."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.services = await build(settings, backends)
        app.state.requests = RequestMemo()      # bodies seen before, parsed
        log.info("cachegate ready: models %s", list(app.state.services.gateway.backends))
        try:
            yield
        finally:
            await app.state.services.close()

    app = FastAPI(title="cachegate", version="0.1.0", lifespan=lifespan)
    install_body_routes(app, operators)
    app.include_router(router)
    if operators:
        for operators_only in (admin_answers, admin_api, admin_page, semantic_admin):   # their own token
            app.include_router(operators_only, include_in_schema=False)
    install_error_handlers(app)
    openapi.install(app, {path: r for path, r in BODY_ROUTES.items() if operators or path != FEEDBACK_PATH})
    app.add_middleware(InFlightLimit, limit=settings.server.max_concurrent_requests, on_reject=count_rejected)
    return app


def count_rejected(scope) -> None:
    """A request refused by the in-flight bound still shows in the metrics (as a 503)."""
    services = getattr(scope["app"].state, "services", None)
    if services is not None:
        endpoint = "chat" if scope["path"].endswith("chat/completions") else "completions"
        services.telemetry.finish(services.telemetry.start(endpoint), 503)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(APIError)
    async def api_error(_: Request, exc: APIError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
        return JSONResponse(error_body(str(exc.detail), kind), status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(error_body(str(exc.errors()[0]["msg"]), "invalid_request_error"), status_code=400)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return JSONResponse(error_body("The server had an error while processing your request", "server_error"),
                            status_code=500)
