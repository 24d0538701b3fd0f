"""Requests seen byte for byte before: their parsed and validated form, so a repeat (the hot path of an
exact hit, a code-completion client sending the same short prompt) skips JSON parsing, schema validation
and the size checks. Keyed by endpoint and the raw body; bounded in entries and body size."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

MAX_ENTRIES = 2048
MAX_BODY_BYTES = 8192       # larger bodies are parsed every time (and would make the memo large)


class RequestMemo:
    def __init__(self, entries: int = MAX_ENTRIES, max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self.entries = entries
        self.max_body_bytes = max_body_bytes
        self.parsed: OrderedDict[tuple[str, bytes], Any] = OrderedDict()
        self.hits = 0

    def get(self, kind: str, raw: bytes) -> Any | None:
        if len(raw) > self.max_body_bytes:
            return None
        found = self.parsed.get((kind, raw))
        if found is not None:
            self.parsed.move_to_end((kind, raw))
            self.hits += 1
        return found

    def put(self, kind: str, raw: bytes, parsed: Any) -> None:
        """Only requests that passed every check: a memoised request is a valid one."""
        if len(raw) <= self.max_body_bytes:
            self.parsed[(kind, raw)] = parsed
            if len(self.parsed) > self.entries:
                self.parsed.popitem(last=False)
