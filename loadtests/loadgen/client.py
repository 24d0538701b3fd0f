"""Sends one OpenAI request to the gateway with aiohttp, as JSON or as an SSE stream, and returns a
`Result`: the cache outcome header, the text, usage, latency and time to first token, or the error kind."""
from __future__ import annotations

import json
import time
from typing import Any

import aiohttp

from loadtests.loadgen.result import Result

PATHS = {"chat": "/v1/chat/completions", "completions": "/v1/completions"}


async def send(http: aiohttp.ClientSession, base: str, endpoint: str, body: dict[str, Any],
               result: Result) -> Result:
    """Fill `result` from one request; never raises for HTTP or network failures."""
    started = time.perf_counter()
    try:
        async with http.post(base + PATHS[endpoint], json=body) as response:
            result.outcome = response.headers.get("x-cachegate-cache", "none")
            similarity = response.headers.get("x-cachegate-similarity")
            result.similarity = float(similarity) if similarity else None
            result.entry = response.headers.get("x-cachegate-entry")
            if response.status >= 400:
                await response.read()
                result.error = f"http_{response.status}"
            elif body.get("stream"):
                await read_stream(response, endpoint, result, started)
            else:
                read_whole(await response.json(), endpoint, result)
    except (aiohttp.ClientError, OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        # network failures, timeouts, malformed bodies: the kind of failure is what the report counts
        result.error = type(exc).__name__
    result.latency_ms = (time.perf_counter() - started) * 1000
    if result.ttft_ms is None and result.ok:
        result.ttft_ms = result.latency_ms
    if not result.ok:
        result.outcome = "error"
    return result


async def read_stream(response: aiohttp.ClientResponse, endpoint: str, result: Result, started: float) -> None:
    done = False
    async for raw in response.content:
        line = raw.decode().strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            done = True
            break
        event = json.loads(data)
        if "error" in event:
            result.error = "stream_error"
            return
        text = delta_text(event, endpoint)
        if text and result.ttft_ms is None:
            result.ttft_ms = (time.perf_counter() - started) * 1000
        result.text += text
        take_usage(event.get("usage"), result)
    if not done:
        result.error = "incomplete_stream"


def read_whole(body: dict[str, Any], endpoint: str, result: Result) -> None:
    choice = body["choices"][0]
    result.text = choice["message"]["content"] if endpoint == "chat" else choice["text"]
    take_usage(body.get("usage"), result)


def delta_text(event: dict[str, Any], endpoint: str) -> str:
    if not event.get("choices"):
        return ""
    choice = event["choices"][0]
    if endpoint == "chat":
        return choice.get("delta", {}).get("content") or ""
    return choice.get("text") or ""


def take_usage(usage: dict[str, Any] | None, result: Result) -> None:
    if usage:
        result.prompt_tokens = int(usage.get("prompt_tokens") or 0)
        result.completion_tokens = int(usage.get("completion_tokens") or 0)
