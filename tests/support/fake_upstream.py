"""A stand-in OpenAI-compatible upstream on a loopback port, scripted per request: answer, 429, 500,
stall, die after the first chunk, or call a tool. For testing the upstream client and resilience logic."""
from __future__ import annotations

import asyncio
import json
from collections import deque

from aiohttp import web

from tests.support.redis_server import free_port


class FakeUpstream:
    def __init__(self, text: str = "hello from upstream") -> None:
        self.text = text
        self.script: deque[str] = deque()   # "ok" | "429" | "500" | "400" | "stall" | "die" | "tool"
        self.requests: list[dict] = []
        self.headers: list[dict] = []       # each request's headers, lower-cased names
        self.port = free_port()
        self.runner: web.AppRunner | None = None
        self.release = asyncio.Event()      # set on exit, so stalled handlers end with the server

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> FakeUpstream:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.handle)
        app.router.add_post("/v1/completions", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        return self

    async def __aexit__(self, *_: object) -> None:
        self.release.set()
        await self.runner.cleanup()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append({k.lower(): v for k, v in request.headers.items()})
        action = self.script.popleft() if self.script else "ok"
        if action == "tool":
            return await self.call_tool(request)
        if action == "429":
            return web.json_response({"error": {"message": "slow down", "type": "rate_limit_error"}},
                                     status=429, headers={"retry-after": "0"})
        if action == "500":
            return web.json_response({"error": {"message": "boom", "type": "server_error"}}, status=500)
        if action == "400":
            return web.json_response({"error": {"message": "bad temperature", "type": "invalid_request_error",
                                                "param": "temperature", "code": None}}, status=400)
        if action == "stall":
            try:
                await asyncio.wait_for(self.release.wait(), 30)
            except asyncio.TimeoutError:
                pass
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        words = self.text.split(" ")
        chat = "messages" in body
        for i, word in enumerate(words):
            piece = word if i == 0 else " " + word
            choice = {"index": 0, "delta": {"content": piece}} if chat else {"index": 0, "text": piece}
            choice["finish_reason"] = "stop" if i == len(words) - 1 else None
            await response.write(b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n")
            if action == "die":
                request.transport.close()
                return response
        usage = {"prompt_tokens": 5, "completion_tokens": len(words), "total_tokens": 5 + len(words),
                 "prompt_tokens_details": {"cached_tokens": 4}}
        await response.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
        await response.write(b"data: [DONE]\n\n")
        return response

    async def call_tool(self, request: web.Request) -> web.StreamResponse:
        """Two parallel calls of `get_weather`, their arguments streamed in pieces, as OpenAI streams them."""
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        deltas = [
            {"index": 0, "id": "call_paris", "type": "function", "function": {"name": "get_weather", "arguments": ""}},
            {"index": 0, "function": {"arguments": '{"city": '}}, {"index": 0, "function": {"arguments": '"Paris"}'}},
            {"index": 1, "id": "call_lyon", "type": "function", "function": {"name": "get_weather", "arguments": ""}},
            {"index": 1, "function": {"arguments": '{"city": "Lyon"}'}},
        ]
        first = {"index": 0, "delta": {"role": "assistant", "content": None}, "finish_reason": None}
        await response.write(b"data: " + json.dumps({"choices": [first]}).encode() + b"\n\n")
        for delta in deltas:
            choice = {"index": 0, "delta": {"tool_calls": [delta]}, "finish_reason": None}
            await response.write(b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n")
        done = {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
        usage = {"prompt_tokens": 20, "completion_tokens": 18, "total_tokens": 38}
        await response.write(b"data: " + json.dumps({"choices": [done]}).encode() + b"\n\n")
        await response.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
        await response.write(b"data: [DONE]\n\n")
        return response
