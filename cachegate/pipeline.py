"""The request path of the gateway, free of HTTP: exact tier → backend → admission → store.

`Gateway.serve` returns an `Outcome` whose chunks replay a cached answer or stream a fresh one; a
fresh answer is offered to the cache once it has finished, before its last chunk reaches the client.
"""
from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from cachegate.backends.base import Backend, BackendRequest, Chunk, Usage
from cachegate.cache.answer import CachedAnswer
from cachegate.cache.exact import ExactTier
from cachegate.cache.keys import exact_key
from cachegate.errors import BackendUnavailable, ModelNotFound
from cachegate.stats import Stats
from policies.admission import AdmissionPolicy

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    cache: str          # "hit-exact" | "miss"
    key: str
    model: str
    chunks: AsyncIterator[Chunk]


class Gateway:
    def __init__(self, backends: dict[str, Backend], exact: ExactTier | None,
                 admission: AdmissionPolicy, stats: Stats) -> None:
        self.backends = backends
        self.exact = exact
        self.admission = admission
        self.stats = stats

    def backend_for(self, model: str) -> Backend:
        backend = self.backends.get(model)
        if backend is None:
            raise ModelNotFound(model)
        return backend

    async def serve(self, endpoint: str, request: BackendRequest) -> Outcome:
        backend = self.backend_for(request.model)
        key = exact_key(endpoint, request)
        if self.exact is not None:
            hit = await self.exact.lookup(key)
            if hit is not None:
                return Outcome("hit-exact", key, request.model, replay(hit))
        chunks = backend.generate(request)
        try:
            first = await anext(chunks)
        except StopAsyncIteration:
            raise BackendUnavailable(f"the backend of '{request.model}' returned no answer") from None
        return Outcome("miss", key, request.model, self._record(key, request.model, first, chunks))

    async def _record(self, key: str, model: str, first: Chunk, rest: AsyncIterator[Chunk]) -> AsyncIterator[Chunk]:
        """Pass the stream through, and store the whole answer when it finishes (and is admitted)."""
        text = []
        try:
            chunk: Chunk | None = first
            while chunk is not None:
                text.append(chunk.text)
                if chunk.finish_reason:
                    await self._admit(key, model, "".join(text), chunk)
                yield chunk
                chunk = await anext(rest, None)
        finally:
            await rest.aclose()

    async def _admit(self, key: str, model: str, text: str, last: Chunk) -> None:
        if self.exact is None or not self.admission.admits(text, last.finish_reason):
            return
        answer = CachedAnswer(text=text, finish_reason=last.finish_reason or "stop", model=model,
                              usage=last.usage or Usage())
        await self.exact.put(key, answer, self.admission.ttl_for())
        self.stats.stored += 1


async def replay(answer: CachedAnswer) -> AsyncIterator[Chunk]:
    yield Chunk(text=answer.text, finish_reason=answer.finish_reason, usage=answer.usage)
