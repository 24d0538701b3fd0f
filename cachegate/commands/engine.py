"""`cachegate engine`: one engine as its own OpenAI-compatible server, with no cache in front of it.

The app (`cachegate.api.engine_app`) is the gateway's public face over one in-process model with no cache
wiring, so an engine process speaks exactly the API (errors, streaming, usage) the gateway's upstream backend
expects. With a shared secret
in `CACHEGATE_ENGINE_TOKEN` (or the variable `--gateway-token-env` names), only a gateway holding it is
served, and only it may name the tenant a request is for (`x-cachegate-tenant`, which scopes prefix
reuse); without one the engine is open and every request is the tenant `default`. `GET /engine/stats`
adds the engine's own figures: KV blocks (total, free, cached, in use), prefix hit rate, running and
waiting requests, preemptions, recent TTFT / TPOT medians.
"""
from __future__ import annotations

import argparse
import logging
import os

from cachegate.settings import DTYPE_CHOICES, Settings

log = logging.getLogger(__name__)
TOKEN_ENV = "CACHEGATE_ENGINE_TOKEN"


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
    p.add_argument("--gateway-token-env", default=TOKEN_ENV,
                   help="environment variable holding the secret gateways send as their bearer token "
                        f"(default {TOKEN_ENV}); set it to serve only gateways and honour their tenants")


def run(args: argparse.Namespace) -> int:
    from cachegate.api.engine_app import create_engine_app
    from cachegate.commands.serve import run_uvicorn
    settings = engine_settings(args)
    logging.basicConfig(level=settings.server.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not settings.auth.keys:
        log.warning("no %s set: the engine is open and serves every request as tenant 'default' "
                    "(per-tenant prefix isolation needs the gateway's token)", args.gateway_token_env)
    run_uvicorn(create_engine_app(settings), settings)
    return 0


def engine_settings(args: argparse.Namespace) -> Settings:
    model = {"name": args.name or served_name(args.model), "path": args.model, "device": args.device,
             "dtype": args.dtype, "max_context": args.max_context}
    token = os.environ.get(getattr(args, "gateway_token_env", TOKEN_ENV) or TOKEN_ENV)
    keys = [{"key": token, "tenant": "gateway", "trusted_gateway": True}] if token else []
    return Settings.model_validate({
        "server": {"host": args.host, "port": args.port, "log_level": args.log_level},
        "models": [model],
        "cache": {"exact": {"enabled": False}, "semantic": {"enabled": False}, "single_flight": False},
        "auth": {"keys": keys},
    })


def served_name(spec: str) -> str:
    name = spec.removeprefix("packaged:").rstrip("/").rsplit("/", 1)[-1]
    return name.removesuffix(".gguf")
