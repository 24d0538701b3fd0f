"""Requests seen byte for byte before: their parsed and validated form, so a repeat (the hot path of an
exact hit, a code-completion client sending the same short prompt) skips JSON parsing, schema validation
and the size checks. Keyed by endpoint and the raw body; bounded in entries and body size."""
from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from cachegate.backends.base import BackendRequest

MAX_ENTRIES = 2048
MAX_BODY_BYTES = 8192       # larger bodies are parsed every time (and would make the memo large)


@dataclass(frozen=True)
class Parsed:
    """A request body as the gateway reads it: validated, its token estimate, and the backend request it
    makes (with no tenant or id yet: those are the sender's, filled in by `request_for`)."""
    body: Any
    estimate: tuple[int, int]
    request: BackendRequest

    def request_for(self, tenant: str, request_id: str) -> BackendRequest:
        request = copy.copy(self.request)           # messages and tools are shared, never changed
        request.tenant, request.request_id = tenant, request_id
        return request


class RequestMemo:
    def __init__(self, entries: int = MAX_ENTRIES, max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self.entries = entries
        self.max_body_bytes = max_body_bytes
        self.parsed: OrderedDict[tuple[str, bytes], Parsed] = OrderedDict()
        self.hits = 0

    def get(self, kind: str, raw: bytes) -> Parsed | None:
        if len(raw) > self.max_body_bytes:
            return None
        found = self.parsed.get((kind, raw))
        if found is not None:
            self.parsed.move_to_end((kind, raw))
            self.hits += 1
        return found

    def put(self, kind: str, raw: bytes, parsed: Parsed) -> None:
        """Only requests that passed every check: a memoised request is a valid one."""
        if len(raw) <= self.max_body_bytes:
            self.parsed[(kind, raw)] = parsed
            if len(self.parsed) > self.entries:
                self.parsed.popitem(last=False)
