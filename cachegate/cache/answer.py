"""A cached answer: what a tier stores and replays, independent of JSON or SSE shape.

Besides the text it keeps how the backend streamed it (the length of each chunk, about one token each,
and when each came), so a replay streams in the same shape, and an answer can be cut to a smaller
`max_tokens` at a token boundary (`fit`). Bytes read back from a store are validated field by field:
anything malformed raises `CorruptEntry`, never a stray TypeError deep in a request.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from cachegate.backends.base import Usage, merge_tool_calls
from cachegate.json_depth import depth

MAX_ENTRY_DEPTH = 32      # JSON nesting a stored answer may have (tool-call arguments are strings)
WORDS = re.compile(r"\s*\S+\s*|\s+")


def word_pieces(text: str) -> list[int]:
    """Lengths of the text's words with their spaces: the pieces of an answer stored without the backend's."""
    return [len(w) for w in WORDS.findall(text)]


class CorruptEntry(ValueError):
    """A stored value that is not a well-formed entry: dropped, counted, served as a miss."""


@dataclass
class CachedAnswer:
    text: str
    finish_reason: str
    model: str
    usage: Usage
    created: float = field(default_factory=time.time)
    pieces: list[int] | None = None          # length in characters of each streamed chunk (about a token)
    offsets_ms: list[int] | None = None      # when each chunk arrived, ms after the first
    tool_calls: list[dict[str, Any]] | None = None   # whole OpenAI tool calls

    def to_bytes(self) -> bytes:
        data = asdict(self)
        return json.dumps({k: v for k, v in data.items() if v is not None}, ensure_ascii=False).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> CachedAnswer:
        return cls.from_dict(load_json(raw))

    @classmethod
    def from_dict(cls, data: Any) -> CachedAnswer:
        need(isinstance(data, dict), "an answer is an object")
        usage = data.get("usage")
        need(isinstance(usage, dict), "usage is an object")
        answer = cls(text=typed(data, "text", str), finish_reason=typed(data, "finish_reason", str),
                     model=typed(data, "model", str),
                     usage=Usage(**{k: count(usage, k) for k in ("prompt_tokens", "completion_tokens",
                                                                 "cached_tokens") if k in usage}),
                     created=float(typed(data, "created", (int, float))),
                     pieces=ints(data.get("pieces"), "pieces"), offsets_ms=ints(data.get("offsets_ms"), "offsets_ms"),
                     tool_calls=tool_calls(data.get("tool_calls")))
        need(answer.pieces is None or sum(answer.pieces) == len(answer.text), "pieces cover the text")
        return answer

    @property
    def complete(self) -> bool:
        """Finished by itself (not cut by `max_tokens`)."""
        return self.finish_reason != "length"

    def covers(self, other: CachedAnswer) -> bool:
        """Serves at least every `max_tokens` the other one serves (complete, or cut later)."""
        if self.complete:
            return True
        return not other.complete and self.usage.completion_tokens >= other.usage.completion_tokens

    def fit(self, max_tokens: int, cuttable: bool = True) -> CachedAnswer | None:
        """This answer as a request with `max_tokens` gets it: whole when it fits, cut at a token
        boundary (finish_reason "length") when it is longer, None when it cannot serve the request
        (it was itself cut shorter than asked, or it does not fit and must not be cut: tool calls, and
        any answer to a request whose structure a cut would break, `cuttable=False`)."""
        produced = self.usage.completion_tokens
        if produced <= max_tokens:
            return self if self.complete or produced == max_tokens else None
        if self.tool_calls or not self.pieces or not cuttable:
            return None
        keep = max(1, round(max_tokens * len(self.pieces) / max(1, produced)))   # pieces ≈ tokens
        pieces = self.pieces[:keep]
        return replace(self, text=self.text[:sum(pieces)], finish_reason="length", pieces=pieces,
                       offsets_ms=self.offsets_ms[:keep] if self.offsets_ms else None,
                       usage=replace(self.usage, completion_tokens=max_tokens))


def load_json(raw: bytes) -> Any:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise CorruptEntry(f"not JSON: {type(exc).__name__}") from None
    if opening_brackets(raw) > MAX_ENTRY_DEPTH:      # it nests no deeper than its "[" and "{" count
        need(depth(data, MAX_ENTRY_DEPTH) <= MAX_ENTRY_DEPTH, "nested too deeply")
    return data


def opening_brackets(raw: bytes | str) -> int:
    """How many "[" and "{" a JSON text holds (inside strings too): it cannot nest deeper than that, so a short
    count spares the walk. Counted in C."""
    return raw.count(b"[") + raw.count(b"{") if isinstance(raw, bytes) else raw.count("[") + raw.count("{")


def need(condition: bool, what: str) -> None:
    if not condition:
        raise CorruptEntry(f"malformed entry: {what}")


def typed(data: dict, key: str, kind: type | tuple[type, ...]) -> Any:
    value = data.get(key)
    need(isinstance(value, kind) and not isinstance(value, bool), f"{key} has the wrong type")
    return value


def count(data: dict, key: str) -> int:
    value = typed(data, key, int)
    need(value >= 0, f"{key} is negative")
    return value


def ints(value: Any, key: str) -> list[int] | None:
    if value is None:
        return None
    need(isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                         for v in value), f"{key} is a list of counts")
    return value


def tool_calls(value: Any) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    need(isinstance(value, list), "tool_calls is a list")
    for call in value:
        need(isinstance(call, dict) and isinstance(call.get("id"), str), "a tool call has an id")
        fn = call.get("function")
        need(isinstance(fn, dict) and isinstance(fn.get("name"), str) and isinstance(fn.get("arguments"), str),
             "a tool call names a function and its arguments")
    return value


class AnswerBuilder:
    """Gathers a streamed answer chunk by chunk: its text and pieces, their timing, its tool calls."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.parts: list[str] = []
        self.offsets_ms: list[int] = []
        self.calls: list[dict[str, Any]] = []
        self.started: float | None = None
        self.last = None

    def add(self, chunk) -> None:
        now = time.perf_counter()
        self.started = self.started if self.started is not None else now
        if chunk.text:
            self.parts.append(chunk.text)
            self.offsets_ms.append(int((now - self.started) * 1000))
        if chunk.tool_calls:
            merge_tool_calls(self.calls, chunk.tool_calls)
        self.last = chunk

    def answer(self) -> CachedAnswer:
        """The answer so far, finished by the last chunk added."""
        last = self.last
        return CachedAnswer(text="".join(self.parts), finish_reason=last.finish_reason or "stop", model=self.model,
                            usage=last.usage or Usage(), pieces=[len(p) for p in self.parts],
                            offsets_ms=list(self.offsets_ms), tool_calls=self.calls or None)
