"""The backend contract: `generate(request)` streams `Chunk`s of one answer.

The in-process engine, an engine server and any OpenAI-compatible upstream all honour it, so the
gateway's pipeline never knows which one answers.
"""
from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class Sampling:
    """How an answer is drawn: the gateway's own type, which each backend translates (the in-process engine to
    its `SamplingParams`, an upstream to OpenAI's fields)."""
    max_tokens: int = 256
    temperature: float = 1.0      # 0 means greedy
    top_p: float = 1.0            # nucleus mass kept, in (0, 1]
    top_k: int = 0                # 0 or -1 keeps every token
    seed: int | None = None       # a seeded request repeats exactly
    stop: list[str] = field(default_factory=list)
    ignore_eos: bool = False

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")
        if not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")
        if self.top_k < -1:
            raise ValueError("top_k must be -1, 0 or positive")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0 or self.top_k == 1


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0          # prompt tokens whose KV the engine reused (OpenAI's prompt_tokens_details)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens,
                "prompt_tokens_details": {"cached_tokens": self.cached_tokens}}


@dataclass
class BackendRequest:
    """One generation: chat `messages` or a plain `prompt`, never both."""
    model: str
    params: Sampling
    messages: list[dict[str, Any]] | None = None
    prompt: str | None = None
    tools: list[dict[str, Any]] | None = None
    tenant: str = "default"
    priority: int = 0
    request_id: str = ""
    user: str | None = None             # the client's own `user` field (passed on upstream, never the tenant)
    max_tokens_explicit: bool = True    # False: the default may be clamped to the room left in context
    extra: dict[str, Any] = field(default_factory=dict)  # other answer-changing fields (tool_choice...)

    def __post_init__(self) -> None:
        assert (self.messages is None) != (self.prompt is None), "a request carries messages or a prompt"

    @property
    def question(self) -> str:
        """What this request asks: the prompt, or the last user turn's text ("" without one). Telemetry, the
        router and the semantic tier all read the question here."""
        if self.prompt is not None:
            return self.prompt
        users = [m.get("content") or "" for m in self.messages or [] if m["role"] == "user"]
        return users[-1] if users else ""


@dataclass
class Chunk:
    """A text delta; the last chunk of an answer carries `finish_reason` and `usage`.

    `tool_calls` carries OpenAI's streamed tool-call deltas as they are on the wire: a list of
    `{"index": i, "id"?: str, "type"?: "function", "function": {"name"?: str, "arguments"?: str}}`,
    where later deltas of the same index append to `arguments` (see `merge_tool_calls`)."""
    text: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    tool_calls: list[dict[str, Any]] | None = None


def merge_tool_calls(calls: list[dict[str, Any]], deltas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fold streamed tool-call deltas into whole calls (`calls` is extended in place and returned):
    `{"id", "type": "function", "function": {"name", "arguments"}}` in index order."""
    for delta in deltas:
        index = int(delta.get("index", len(calls)))
        while len(calls) <= index:
            calls.append({"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
        call, fn = calls[index], delta.get("function") or {}
        call["id"] = delta.get("id") or call["id"]
        call["type"] = delta.get("type") or call["type"]
        call["function"]["name"] += fn.get("name") or ""
        call["function"]["arguments"] += fn.get("arguments") or ""
    return calls


@dataclass
class ModelInfo:
    name: str
    tier: str
    max_context: int
    default_max_tokens: int = 256
    owned_by: str = "cachegate"
    extra: dict[str, Any] = field(default_factory=dict)


class Backend(Protocol):
    info: ModelInfo

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    def generate(self, request: BackendRequest) -> AsyncIterator[Chunk]:
        """Stream the answer. Raises `cachegate.errors.APIError` for a request it cannot serve
        (context too long: 400) before the first chunk, and for its own failures (503)."""
        ...
