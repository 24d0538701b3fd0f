"""The fallback chain: try the route's models in order until one starts answering.

A retryable failure before the first chunk moves on to the next model (large → small), so a dead
model degrades answers instead of failing them; a request the backend rejects goes back as it is.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator

from cachegate.backends.base import Backend, BackendRequest, Chunk
from cachegate.backends.streams import first_answer
from cachegate.errors import BackendError, BackendUnavailable
from cachegate.routing.router import Route

log = logging.getLogger(__name__)


async def generate_with_fallback(backends: dict[str, Backend], route: Route,
                                 request: BackendRequest) -> AsyncIterator[Chunk]:
    error: BackendError = BackendUnavailable(f"no model of route {route.chain} is configured")
    for model in route.chain:
        try:
            chunks = await first_answer(backends[model].generate(dataclasses.replace(request, model=model)),
                                        lambda: BackendUnavailable(f"{model} returned no answer"))
        except BackendError as exc:
            if not exc.retryable:
                raise
            log.warning("%s failed before answering (%s); trying the next model of %s", model, exc, route.chain)
            error = exc
            continue
        route.answered_by = model
        async for chunk in chunks:
            yield chunk
        return
    raise error
