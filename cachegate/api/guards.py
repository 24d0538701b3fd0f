"""Guards at the HTTP edge against clients that are slow, large, too many, or not clients at all.

- `read_body`: counts bytes as they arrive and stops at the limit (413), however the body is framed
  (`content-length` or chunked), and gives up on a body that trickles in past `body_timeout_s` (408).
- `require_json`: `application/json` only (415), so a web page cannot drive a loopback gateway with a
  "simple" cross-origin POST (text/plain, form encodings) that browsers send without a preflight.
- `InFlightLimit`: at most `limit` API requests in flight; past it a quick 503 with `retry-after`.
- `header_timeout_protocol`: uvicorn's protocol, closing connections that have not sent their request
  headers within `timeout_s` (uvicorn has a keep-alive timeout, but none for a request's first bytes).
"""
from __future__ import annotations

import asyncio

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.requests import ClientDisconnect

from cachegate.errors import InvalidRequest, error_body

JSON_TYPES = ("application/json",)


def require_json(http: Request) -> None:
    media_type = http.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type not in JSON_TYPES and not (media_type.startswith("application/") and media_type.endswith("+json")):
        raise InvalidRequest(f"Send the request body as JSON with 'Content-Type: application/json' "
                             f"(got {media_type or 'none'!r})", param="Content-Type",
                             code="unsupported_media_type", status=415)


def closing(error: InvalidRequest) -> InvalidRequest:
    """The connection closes after this answer, so the rest of an unread body is never taken in."""
    error.headers = {"connection": "close"}
    return error


def too_large(limit: int) -> InvalidRequest:
    return closing(InvalidRequest(f"The request body is larger than {limit} bytes", code="request_too_large",
                                  status=413))


async def read_body(http: Request, limit: int, timeout_s: float) -> bytes:
    declared = http.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    parts: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout_s):
            async for part in http.stream():
                size += len(part)
                if size > limit:
                    raise too_large(limit)
                parts.append(part)
    except TimeoutError:
        raise closing(InvalidRequest(f"The request body did not arrive within {timeout_s:g} s",
                                     code="request_timeout", status=408)) from None
    except ClientDisconnect:
        raise InvalidRequest("The client went away while sending the request body", code="client_disconnected",
                             status=400) from None
    return b"".join(parts)


class InFlightLimit:
    """ASGI middleware: API requests (`/v1/...`) past `limit` in flight get a 503 with `retry-after`
    at once, instead of queueing behind the others; `on_reject(path)` counts them."""

    def __init__(self, app, limit: int, on_reject=None) -> None:
        self.app = app
        self.limit = limit
        self.on_reject = on_reject
        self.active = 0

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            return await self.app(scope, receive, send)
        if self.active >= self.limit:
            if self.on_reject is not None:
                self.on_reject(scope)
            body = error_body(f"The gateway is serving {self.limit} requests already; retry shortly",
                              "server_error", None, "overloaded")
            return await JSONResponse(body, status_code=503, headers={"retry-after": "1"})(scope, receive, send)
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1


def header_timeout_protocol(timeout_s: float) -> type:
    """uvicorn's HTTP protocol (httptools when installed, else h11), closing a connection whose request
    headers have not all arrived `timeout_s` after it opened."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    except ImportError:     # pragma: no cover - httptools is part of uvicorn[standard]
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base

    class HeaderTimeoutProtocol(Base):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._headers_due = self.loop.call_later(timeout_s, self._headers_overdue)

        def _headers_overdue(self) -> None:
            if self.cycle is None and not self.transport.is_closing():    # no request has started
                self.transport.close()

        def connection_lost(self, exc) -> None:
            self._headers_due.cancel()
            super().connection_lost(exc)

    return HeaderTimeoutProtocol
