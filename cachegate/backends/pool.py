"""The replicas of one tier: least outstanding requests, preferring the replica that last served the
same conversation or prefix (so engine prefix caches stay warm), failing over before the first chunk.
"""
from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import AsyncIterator

from cachegate.backends.base import BackendRequest, Chunk, ModelInfo
from cachegate.backends.resilience import ResilientBackend
from cachegate.backends.streams import first_answer
from cachegate.errors import BackendError, BackendUnavailable

AFFINITY_SLACK = 2          # an affine replica may be this many requests busier than the least busy
AFFINITY_ENTRIES = 10_000


class TierPool:
    def __init__(self, name: str, replicas: list[ResilientBackend]) -> None:
        assert replicas, f"tier {name} needs at least one replica"
        self.name = name
        self.replicas = replicas
        self.info: ModelInfo = replicas[0].info
        self.affinity: OrderedDict[str, int] = OrderedDict()

    async def start(self) -> None:
        for replica in self.replicas:
            await replica.start()

    async def close(self) -> None:
        for replica in self.replicas:
            await replica.close()

    @property
    def available(self) -> bool:
        return any(r.available for r in self.replicas)

    def choose(self, request: BackendRequest, exclude: set[int] = frozenset()) -> int | None:
        candidates = [i for i, r in enumerate(self.replicas) if i not in exclude and r.available]
        if not candidates:
            return None
        least = min(self.replicas[i].outstanding for i in candidates)
        affine = self.affinity.get(affinity_key(request))
        if affine in candidates and self.replicas[affine].outstanding <= least + AFFINITY_SLACK:
            return affine
        return min(candidates, key=lambda i: self.replicas[i].outstanding)

    async def generate(self, request: BackendRequest) -> AsyncIterator[Chunk]:
        tried: set[int] = set()
        error: BackendError = BackendUnavailable(f"tier {self.name}: no replica available")
        while (index := self.choose(request, tried)) is not None:
            tried.add(index)
            replica = self.replicas[index]
            try:
                chunks = await first_answer(replica.generate(request),
                                            lambda: BackendUnavailable(f"{replica.info.name}: empty answer"))
            except BackendError as exc:
                if not exc.retryable:
                    raise
                error = exc
                continue
            self.remember(request, index)
            async for chunk in chunks:
                yield chunk
            return
        raise error

    def remember(self, request: BackendRequest, index: int) -> None:
        key = affinity_key(request)
        self.affinity[key] = index
        self.affinity.move_to_end(key)
        while len(self.affinity) > AFFINITY_ENTRIES:
            self.affinity.popitem(last=False)


def affinity_key(request: BackendRequest) -> str:
    """The conversation's opening (system prompt and first user turn) or the prompt's first 512
    characters: what an engine's prefix cache would hold for this request."""
    if request.messages is not None:
        opening = []
        for message in request.messages:
            opening.append(message)
            if message["role"] == "user":
                break
        material = json.dumps(opening, sort_keys=True)
    else:
        material = (request.prompt or "")[:512]
    return hashlib.sha1(f"{request.tenant}\x00{material}".encode()).hexdigest()
