"""`cachegate serve`: the gateway over uvicorn, with settings from a file, the environment and flags."""
from __future__ import annotations

import argparse
import logging
import os
from typing import Any

from cachegate.settings import Settings, load_settings


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default=os.environ.get("CACHEGATE_CONFIG"), help="YAML config file")
    p.add_argument("--host", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 8000)")
    p.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    p.add_argument("--redis-url", help="use Redis for the exact and semantic caches at this URL")


def run(args: argparse.Namespace) -> int:
    return serve(settings_from_args(args))


def settings_from_args(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {"server": {}}
    for flag in ("host", "port", "log_level"):
        if getattr(args, flag) is not None:
            overrides["server"][flag] = getattr(args, flag)
    if args.redis_url:
        overrides["redis"] = {"url": args.redis_url}
        overrides["cache"] = {"exact": {"store": "redis"}, "semantic": {"store": "redis"}}
    return load_settings(args.config or None, overrides=overrides)


def serve(settings: Settings) -> int:
    from cachegate.api.app import create_app
    logging.basicConfig(level=settings.server.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    run_uvicorn(create_app(settings), settings)
    return 0


def run_uvicorn(app, settings: Settings) -> None:
    import uvicorn
    uvicorn.Server(uvicorn_config(app, settings)).run()


def uvicorn_config(app, settings: Settings, **overrides: Any):
    """uvicorn as the gateway runs it, with the edge guards: a deadline for request headers."""
    import uvicorn

    from cachegate.api.guards import header_timeout_protocol
    options = dict(host=settings.server.host, port=settings.server.port, log_level=settings.server.log_level,
                   timeout_graceful_shutdown=5, http=header_timeout_protocol(settings.server.header_timeout_s))
    return uvicorn.Config(app, **(options | overrides))
