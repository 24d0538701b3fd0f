"""Shaping answers as OpenAI objects: whole JSON bodies, or SSE chunk streams ending in `[DONE]`.

The same functions shape fresh and cached answers, so a client cannot tell them apart by shape. Tool
calls go out as OpenAI sends them: whole in `message.tool_calls`, as deltas in a stream. An error after the
first byte of a stream ends it with an error event that names only the request id.
"""
from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from cachegate.backends.base import Chunk, Usage, merge_tool_calls
from cachegate.errors import APIError, server_error

log = logging.getLogger(__name__)


@dataclass
class Answer:
    text: str = ""
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Envelope:
    """What every object of one response shares; its `id` carries the request id."""
    kind: str   # "chat" | "completions"
    model: str
    request_id: str = ""
    created: int = field(default_factory=lambda: int(time.time()))

    def __post_init__(self) -> None:
        self.request_id = self.request_id or uuid.uuid4().hex
        self.id = response_id(self.kind, self.request_id)

    def base(self, object_name: str) -> dict[str, Any]:
        return {"id": self.id, "object": object_name, "created": self.created, "model": self.model,
                "system_fingerprint": "cachegate"}


def response_id(kind: str, request_id: str) -> str:
    """The `id` a response carries (what `POST /v1/cache/feedback` names): OpenAI's prefix and the request id."""
    return ("chatcmpl-" if kind == "chat" else "cmpl-") + request_id[:24]


async def collect(chunks: AsyncIterator[Chunk]) -> Answer:
    answer = Answer()
    async for chunk in chunks:
        answer.text += chunk.text
        if chunk.finish_reason:
            answer.finish_reason = chunk.finish_reason
        if chunk.usage:
            answer.usage = chunk.usage
        if chunk.tool_calls:
            merge_tool_calls(answer.tool_calls, chunk.tool_calls)
    return answer


def whole(env: Envelope, answer: Answer) -> dict[str, Any]:
    if env.kind == "chat":
        message: dict[str, Any] = {"role": "assistant", "content": answer.text}
        if answer.tool_calls:
            message = {"role": "assistant", "content": answer.text or None, "tool_calls": answer.tool_calls}
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": answer.finish_reason}
        body = env.base("chat.completion")
    else:
        choice = {"index": 0, "text": answer.text, "logprobs": None, "finish_reason": answer.finish_reason}
        body = env.base("text_completion")
    return body | {"choices": [choice], "usage": answer.usage.as_dict()}


def chunk_object(env: Envelope, text: str | None, finish_reason: str | None = None,
                 first: bool = False, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if env.kind == "chat":
        delta: dict[str, Any] = {"role": "assistant", "content": ""} if first else {}
        if text:
            delta["content"] = text
        if tool_calls:
            delta["tool_calls"] = tool_calls
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return env.base("chat.completion.chunk") | {"choices": [choice]}
    choice = {"index": 0, "text": text or "", "logprobs": None, "finish_reason": finish_reason}
    return env.base("text_completion") | {"choices": [choice]}


async def sse(env: Envelope, chunks: AsyncIterator[Chunk], include_usage: bool) -> AsyncIterator[bytes]:
    """OpenAI's stream: role chunk (chat), content deltas, the finishing chunk, usage, `[DONE]`.

    A failure after the first byte cannot change the status any more: it ends the stream with an error
    event (which the OpenAI SDK raises as an APIError) instead of leaving the client hanging.
    """
    usage = Usage()
    try:
        if env.kind == "chat":
            yield event(chunk_object(env, None, first=True))
        async for chunk in chunks:
            if chunk.usage:
                usage = chunk.usage
            if chunk.text or chunk.finish_reason or chunk.tool_calls:
                yield event(chunk_object(env, chunk.text, chunk.finish_reason, tool_calls=chunk.tool_calls))
    except APIError as exc:
        if exc.public(env.request_id) is not exc:
            log.warning("stream %s failed: %s", env.request_id, exc.message)
        yield event(exc.public(env.request_id).body())
        return
    except Exception:  # a broken backend must not hang the client
        log.exception("stream %s failed", env.request_id)
        yield event(server_error(env.request_id).body())
        return
    if include_usage:
        yield event(env.base(chunk_object(env, None)["object"]) | {"choices": [], "usage": usage.as_dict()})
    yield b"data: [DONE]\n\n"


def event(obj: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"
