"""The `cachegate` command: `serve` runs the gateway; `calibrate`, `eval semantic`, `bench semantic` fit,
measure and time the semantic tier (each verb lives in its own module); later verbs join here."""
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
    add_semantic_verbs(verbs)
    args = parser.parse_args(argv)
    if args.verb == "serve":
        return serve_gateway(settings_from_args(args))
    if getattr(args, "run", None) is not None:
        return args.run(args)
    return 2


def add_semantic_verbs(verbs: argparse._SubParsersAction) -> None:
    """`calibrate`, `eval semantic` and `bench semantic`; their modules load only when the verb runs."""
    def lazy(module: str):
        def run(args: argparse.Namespace) -> int:
            import importlib
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            return importlib.import_module(module).run(args)
        return run

    from cachegate import calibrate, evaluate
    from loadtests import bench_semantic
    p = verbs.add_parser("calibrate", help="fit the semantic similarity policy to a target false-hit rate")
    calibrate.add_arguments(p)
    p.set_defaults(run=lazy("cachegate.calibrate"))
    for verb, module, text in (("eval", evaluate, "measure the semantic policy on labeled data"),
                               ("bench", bench_semantic, "time semantic lookups")):
        sub = verbs.add_parser(verb, help=text).add_subparsers(dest="what", required=True)
        p = sub.add_parser("semantic", help=text)
        module.add_arguments(p)
        p.set_defaults(run=lazy(module.__name__))


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
