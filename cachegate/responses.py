"""Shaping answers as OpenAI objects: whole JSON bodies, or SSE chunk streams ending in `[DONE]`.

The same functions shape fresh and cached answers, so a client cannot tell them apart by shape.
"""
from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from cachegate.backends.base import Chunk, Usage
from cachegate.errors import APIError, error_body

log = logging.getLogger(__name__)


@dataclass
class Answer:
    text: str = ""
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass
class Envelope:
    """What every object of one response shares."""
    kind: str   # "chat" | "completions"
    model: str
    id: str = ""
    created: int = field(default_factory=lambda: int(time.time()))

    def __post_init__(self) -> None:
        if not self.id:
            self.id = ("chatcmpl-" if self.kind == "chat" else "cmpl-") + uuid.uuid4().hex[:24]

    def base(self, object_name: str) -> dict[str, Any]:
        return {"id": self.id, "object": object_name, "created": self.created, "model": self.model,
                "system_fingerprint": "cachegate"}


async def collect(chunks: AsyncIterator[Chunk]) -> Answer:
    answer = Answer()
    async for chunk in chunks:
        answer.text += chunk.text
        if chunk.finish_reason:
            answer.finish_reason = chunk.finish_reason
        if chunk.usage:
            answer.usage = chunk.usage
    return answer


def whole(env: Envelope, answer: Answer) -> dict[str, Any]:
    if env.kind == "chat":
        choice = {"index": 0, "message": {"role": "assistant", "content": answer.text},
                  "logprobs": None, "finish_reason": answer.finish_reason}
        body = env.base("chat.completion")
    else:
        choice = {"index": 0, "text": answer.text, "logprobs": None, "finish_reason": answer.finish_reason}
        body = env.base("text_completion")
    return body | {"choices": [choice], "usage": answer.usage.as_dict()}


def chunk_object(env: Envelope, text: str | None, finish_reason: str | None = None,
                 first: bool = False) -> dict[str, Any]:
    if env.kind == "chat":
        delta: dict[str, Any] = {"role": "assistant", "content": ""} if first else {}
        if text:
            delta["content"] = text
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
            if chunk.text or chunk.finish_reason:
                yield event(chunk_object(env, chunk.text, chunk.finish_reason))
    except APIError as exc:
        yield event(exc.body())
        return
    except Exception as exc:  # a broken backend must not hang the client
        log.exception("stream %s failed", env.id)
        yield event(error_body(f"the backend failed mid-stream: {exc}", "server_error", None, "stream_error"))
        return
    if include_usage:
        yield event(env.base(chunk_object(env, None)["object"]) | {"choices": [], "usage": usage.as_dict()})
    yield b"data: [DONE]\n\n"


def event(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"
