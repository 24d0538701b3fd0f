"""A stand-in OpenAI-compatible upstream for soak runs: answers at once with deterministic text, so a
soak measures the gateway's own memory and not a model's. `python -m loadtests.chaos.standin --port P`."""
from __future__ import annotations

import argparse
import hashlib
import json

from aiohttp import web


def answer_for(body: dict) -> str:
    text = json.dumps(body.get("messages") or body.get("prompt"), sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return f"Answer {digest[:12]}: " + " ".join(f"word{int(c, 16)}" for c in digest[:24])


async def complete(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    words = answer_for(body).split(" ")
    response = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await response.prepare(request)
    chat = "messages" in body
    for i, word in enumerate(words):
        piece = word if i == 0 else " " + word
        choice = ({"index": 0, "delta": {"content": piece}} if chat else {"index": 0, "text": piece}) | {
            "finish_reason": "stop" if i == len(words) - 1 else None}
        await response.write(b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n")
    usage = {"prompt_tokens": 20, "completion_tokens": len(words), "total_tokens": 20 + len(words)}
    await response.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\ndata: [DONE]\n\n")
    return response


async def models(_: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [{"id": "standin", "object": "model", "max_context": 8192}]})


def app() -> web.Application:
    application = web.Application()
    application.router.add_post("/v1/chat/completions", complete)
    application.router.add_post("/v1/completions", complete)
    application.router.add_get("/v1/models", models)
    return application


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    web.run_app(app(), host="127.0.0.1", port=parser.parse_args().port, print=None)


if __name__ == "__main__":
    main()
