"""The two servers `cachegate bench gateway` compares, each run as its own process on loopback:

- `echo`: a bare FastAPI app on the same uvicorn stack that answers every POST with one fixed
  OpenAI-shaped body, returned as a dict the way a FastAPI app usually does (SSE when the request asks
  to stream, for the gateway's upstream calls): the floor a request costs.
- `gateway`: the gateway as `cachegate serve` runs it, its one model an upstream pointing at the echo
  app, the semantic tier filled with `--fill` entries in the scope of the benchmark's requests.

`python -m loadtests.bench_gateway_server echo|gateway --port P [...]` prints READY once it serves.
"""
from __future__ import annotations

import argparse
import asyncio
import json

from fastapi import FastAPI, Request
from fastapi.responses import Response

ANSWER = "Our store is open from nine to six on weekdays and from ten to four on Saturdays."
CHAT = {"id": "chatcmpl-echo", "object": "chat.completion", "created": 0, "model": "bench",
        "system_fingerprint": "echo", "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER},
                                                   "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 18, "total_tokens": 48}}


def sse_events() -> bytes:
    words = ANSWER.split(" ")
    events = []
    for i, word in enumerate(words):
        delta = {"content": word if i == 0 else " " + word}
        finish = "stop" if i == len(words) - 1 else None
        events.append({"id": "e", "object": "chat.completion.chunk", "created": 0, "model": "bench",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    events.append({"id": "e", "object": "chat.completion.chunk", "created": 0, "model": "bench", "choices": [],
                   "usage": CHAT["usage"]})
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"


def echo_app() -> FastAPI:
    app = FastAPI()
    stream = sse_events()

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        body = await request.body()
        if b'"stream": true' in body or b'"stream":true' in body:
            return Response(stream, media_type="text/event-stream")
        return CHAT
    return app


def gateway_settings(port: int, upstream: str, precision: str = "auto"):
    from cachegate.settings import load_settings
    return load_settings(env={}, overrides={
        "server": {"port": port, "log_level": "warning"},
        "models": [{"name": "bench", "backend": "upstream", "replicas": [upstream], "max_context": 4096}],
        "cache": {"semantic": {"embedder": {"cache_size": 0,      # every paraphrase is embedded anew
                                            "precision": precision}}},
    })


async def fill_semantic(app, entries: int) -> None:
    """`entries` entries in the scope of the benchmark's requests (real questions, then synthetic ones)."""
    from cachegate.api.translate import ENDPOINT_SCHEMAS, to_backend_request
    from loadtests.http_load import chat_body
    from loadtests.semantic_fill import DATA_DIR, fill, questions
    services = app.state.services
    body = ENDPOINT_SCHEMAS["chat"].model_validate(json.loads(chat_body("x")))
    _route, like = await services.gateway.route("chat", to_backend_request(body))
    stored, _ = questions(DATA_DIR)
    await fill(services.semantic, entries, stored, like=like)


async def serve(args: argparse.Namespace) -> None:
    import uvicorn

    from cachegate.api.app import create_app
    from cachegate.commands.serve import uvicorn_config
    if args.role == "echo":
        config = uvicorn.Config(echo_app(), host="127.0.0.1", port=args.port, log_level="warning")
        app = None
    else:
        settings = gateway_settings(args.port, args.upstream, args.precision)
        app = create_app(settings)
        config = uvicorn_config(app, settings, host="127.0.0.1", port=args.port)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    if app is not None and args.fill:
        await fill_semantic(app, args.fill)
    print("READY", flush=True)
    await task


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["echo", "gateway"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--upstream", help="gateway: the echo app's base URL (…/v1)")
    p.add_argument("--fill", type=int, default=0, help="gateway: semantic entries to fill in")
    p.add_argument("--precision", default="auto", help="gateway: the embedder's precision")
    args = p.parse_args()
    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
