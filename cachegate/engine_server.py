"""`cachegate engine`: one engine as its own OpenAI-compatible server, with no cache in front of it.

It is the gateway app with one in-process model and both cache tiers off, so an engine process speaks
exactly the API (errors, streaming, usage) the gateway's upstream backend expects. `GET /engine/stats`
adds the engine's own figures: KV blocks (total, free, cached, in use), prefix hit rate, running and
waiting requests, preemptions, recent TTFT / TPOT medians.
"""
from __future__ import annotations

import argparse

from cachegate.settings import DTYPE_CHOICES, Settings


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="packaged:smollm2-135m-instruct",
                   help="packaged name, .gguf file or HF folder")
    p.add_argument("--name", help="the model id clients send (default: the packaged name or file stem)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8100)
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto", choices=DTYPE_CHOICES,
                   help="auto: bfloat16 where the device computes it natively, else float32")
    p.add_argument("--max-context", type=int)
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])


def run(args: argparse.Namespace) -> int:
    import logging

    import uvicorn
    settings = engine_settings(args)
    logging.basicConfig(level=settings.server.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    uvicorn.run(create_engine_app(settings), host=settings.server.host, port=settings.server.port,
                log_level=settings.server.log_level, timeout_graceful_shutdown=5)
    return 0


def create_engine_app(settings: Settings):
    """The gateway app (caches off) plus `GET /engine/stats`."""
    from fastapi import Request

    from cachegate.app import create_app
    app = create_app(settings)

    @app.get("/engine/stats", include_in_schema=False)
    async def engine_stats(http: Request) -> dict:
        backends = http.app.state.services.gateway.backends
        return {name: [getattr(r, "backend", r).engine_stats() for r in getattr(b, "replicas", [b])
                       if hasattr(getattr(r, "backend", r), "engine_stats")]
                for name, b in backends.items()}

    return app


def engine_settings(args: argparse.Namespace) -> Settings:
    model = {"name": args.name or served_name(args.model), "path": args.model, "device": args.device,
             "dtype": args.dtype, "max_context": args.max_context}
    return Settings.model_validate({
        "server": {"host": args.host, "port": args.port, "log_level": args.log_level},
        "models": [model],
        "cache": {"exact": {"enabled": False}, "semantic": {"enabled": False}, "single_flight": False},
    })


def served_name(spec: str) -> str:
    name = spec.removeprefix("packaged:").rstrip("/").rsplit("/", 1)[-1]
    return name.removesuffix(".gguf")
