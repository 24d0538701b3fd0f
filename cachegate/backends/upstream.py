"""A backend over HTTP: any OpenAI-compatible server (an engine server, vLLM, a hosted API, another
cachegate), always asked to stream so the gateway can pass tokens on as they come.

Failures are classified for the resilience layer: connection errors, timeouts, 429 and 5xx are
retryable `BackendError`s; any other 4xx is the request's own fault and goes back to the client.
Tool calls pass through as OpenAI streams them. The tenant goes only to the gateway's own engine servers
(`forward_tenant`); a third-party upstream sees the client's own `user` field, or none.
"""
from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from cachegate.backends.base import BackendRequest, Chunk, ModelInfo, Usage
from cachegate.errors import (
    BackendError,
    BackendRateLimited,
    BackendRejected,
    BackendTimeout,
    BackendUnavailable,
)


class UpstreamBackend:
    def __init__(self, info: ModelInfo, url: str, upstream_model: str | None = None, api_key: str | None = None,
                 connect_timeout_s: float = 2.0, read_timeout_s: float = 60.0, forward_tenant: bool = False) -> None:
        self.info = info
        self.url = url.rstrip("/")
        self.forward_tenant = forward_tenant
        self.upstream_model = upstream_model or info.name
        self.api_key = api_key
        self.timeout = aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout_s, sock_read=read_timeout_s)
        self.session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:
        return f"UpstreamBackend({self.info.name} @ {self.url})"

    async def start(self) -> None:
        if self.session is None:
            headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            self.session = aiohttp.ClientSession(timeout=self.timeout, headers=headers)
            if not self.info.max_context:
                await self.learn_context()

    async def learn_context(self) -> None:
        """Ask the server its context length (engine servers and vLLM say it); best effort: a backend
        that is down at start must not stop the gateway from starting."""
        try:
            async with self.session.get(self.url + "/models", timeout=aiohttp.ClientTimeout(total=2)) as r:
                models = (await r.json()).get("data", [])
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError):
            return
        for model in models:
            if model.get("id") == self.upstream_model:
                self.info.max_context = int(model.get("max_context") or model.get("max_model_len") or 0)

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
            self.session = None

    async def generate(self, request: BackendRequest) -> AsyncIterator[Chunk]:
        await self.start()
        assert self.session is not None
        endpoint = "/chat/completions" if request.messages is not None else "/completions"
        try:
            headers = {"x-cachegate-tenant": request.tenant} if self.forward_tenant else None
            async with self.session.post(self.url + endpoint, json=self.body(request), headers=headers) as response:
                if response.status != 200:
                    raise await failure(response)
                async for chunk in parse_stream(response.content):
                    yield chunk
        except (aiohttp.ServerTimeoutError, asyncio.TimeoutError) as exc:
            raise BackendTimeout(f"{self.info.name}: no answer from {self.url} in time ({exc})") from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise BackendUnavailable(f"{self.info.name}: {self.url} unreachable: {exc}") from exc

    def body(self, request: BackendRequest) -> dict[str, Any]:
        p = request.params
        body: dict[str, Any] = {"model": self.upstream_model, "stream": True,
                                "stream_options": {"include_usage": True}, "max_tokens": p.max_tokens,
                                "temperature": p.temperature, "top_p": p.top_p}
        if request.messages is not None:
            body["messages"] = request.messages
            if request.tools:
                body["tools"] = request.tools
            body.update(request.extra)
        else:
            body["prompt"] = request.prompt
        for key, value in (("stop", p.stop or None), ("seed", p.seed), ("top_k", p.top_k or None),
                           ("user", request.user)):
            if value is not None:
                body[key] = value
        return body


async def failure(response: aiohttp.ClientResponse) -> BackendError:
    """The error to raise for a non-200 answer, keeping the upstream's own message."""
    text = await response.text()
    try:
        detail = json.loads(text)["error"]
        message = detail.get("message") or text
    except (ValueError, KeyError, TypeError, AttributeError):
        detail, message = {}, text[:500]
    retry_after = _seconds(response.headers.get("retry-after"))
    if response.status == 429:
        return BackendRateLimited(f"upstream rate limit: {message}", retry_after_s=retry_after)
    if response.status >= 500:
        return BackendUnavailable(f"upstream error {response.status}: {message}", retry_after_s=retry_after)
    return BackendRejected(message, status=response.status, type=detail.get("type", "invalid_request_error"),
                           param=detail.get("param"), code=detail.get("code"))


async def parse_stream(content: aiohttp.StreamReader) -> AsyncIterator[Chunk]:
    """OpenAI SSE → Chunks. The usage-only chunk after the finish is folded into the last chunk."""
    pending: Chunk | None = None
    async for raw in content:
        line = raw.decode().strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        event = json.loads(data)
        if "error" in event:
            raise BackendUnavailable(f"upstream failed mid-stream: {event['error'].get('message')}")
        usage = event.get("usage")
        for choice in event.get("choices") or []:
            if pending is not None:
                yield pending
            delta = choice.get("delta") or {}
            text = delta.get("content") or choice.get("text") or ""
            pending = Chunk(text=text, finish_reason=choice.get("finish_reason"),
                            tool_calls=tool_call_deltas(delta.get("tool_calls")))
        if usage and pending is not None:
            details = usage.get("prompt_tokens_details") or {}
            pending.usage = Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0),
                                  details.get("cached_tokens") or 0)
    else:
        if pending is None or pending.finish_reason is None:
            raise BackendUnavailable("upstream closed the stream before the answer finished")
    if pending is not None:
        yield pending


def tool_call_deltas(raw) -> list[dict] | None:
    """The tool-call deltas of one SSE event, kept to OpenAI's fields (anything malformed is dropped)."""
    if not isinstance(raw, list):
        return None
    out = []
    for delta in raw:
        if not isinstance(delta, dict):
            continue
        fn = delta.get("function") if isinstance(delta.get("function"), dict) else {}
        kept = {"index": delta.get("index", len(out)) if isinstance(delta.get("index", 0), int) else len(out),
                "function": {k: fn[k] for k in ("name", "arguments") if isinstance(fn.get(k), str)}}
        kept |= {k: delta[k] for k in ("id", "type") if isinstance(delta.get(k), str)}
        out.append(kept)
    return out or None


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
