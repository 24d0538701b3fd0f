"""The `cachegate` command: `serve` runs the gateway; later verbs (engine, bench, loadtest...) join here."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from cachegate.settings import Settings, load_settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cachegate", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)
    serve = verbs.add_parser("serve", help="serve the gateway (OpenAI-compatible API)")
    serve.add_argument("--config", default=os.environ.get("CACHEGATE_CONFIG"), help="YAML config file")
    serve.add_argument("--host", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8000)")
    serve.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    serve.add_argument("--redis-url", help="use Redis for the exact cache at this URL")
    args = parser.parse_args(argv)
    if args.verb == "serve":
        return serve_gateway(settings_from_args(args))
    return 2


def settings_from_args(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {"server": {}}
    for flag in ("host", "port", "log_level"):
        if getattr(args, flag) is not None:
            overrides["server"][flag] = getattr(args, flag)
    if args.redis_url:
        overrides["redis"] = {"url": args.redis_url}
        overrides["cache"] = {"exact": {"store": "redis"}}
    return load_settings(args.config or None, overrides=overrides)


def serve_gateway(settings: Settings) -> int:
    import uvicorn

    from cachegate.app import create_app
    logging.basicConfig(level=settings.server.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = create_app(settings)
    uvicorn.run(app, host=settings.server.host, port=settings.server.port,
                log_level=settings.server.log_level, timeout_graceful_shutdown=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
