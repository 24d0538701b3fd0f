"""`cachegate answers import FILE | export | list | delete ID`: the curated library of a running gateway
(through its admin API: `--url`, `--token` or CACHEGATE_ADMIN_TOKEN) or straight in the configured store
(`--config`: a Redis store; the gateways that share it follow the changes)."""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from cachegate.cache.curated.records import CuratedAnswer, read_file, write_jsonl


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["import", "export", "list", "delete"])
    p.add_argument("target", nargs="?", help="import: a .jsonl or .csv file; delete: the answer's id")
    p.add_argument("--url", help="a running gateway, e.g. http://127.0.0.1:8000")
    p.add_argument("--token", default=os.environ.get("CACHEGATE_ADMIN_TOKEN"), help="its admin token")
    p.add_argument("--config", help="a config file whose semantic store is Redis: work on the store directly")
    p.add_argument("--q", default="", help="list: only answers mentioning this")
    p.add_argument("--out", help="export: write here instead of standard output")


def run(args: argparse.Namespace) -> int:
    if (args.url is None) == (args.config is None):
        raise SystemExit("give --url URL (a running gateway) or --config FILE (its Redis store)")
    if args.action in ("import", "delete") and not args.target:
        raise SystemExit(f"answers {args.action} needs {'a file' if args.action == 'import' else 'an id'}")
    records = read_file(args.target) if args.action == "import" else []
    result = over_http(args, records) if args.url else asyncio.run(in_store(args, records))
    if args.action == "export":
        if args.out:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(result)
        else:
            sys.stdout.write(result)
    elif args.action == "list":
        for row in result:
            print(f"{row['id']:<28} {row['hits']:>6} hits  {len(row['questions']):>3} questions  "
                  f"{row.get('tenant') or '*'}/{row.get('model') or '*'}/{row['namespace']}  {row['answer'][:60]!r}")
    else:
        print(json.dumps(result))
    return 0


def over_http(args: argparse.Namespace, records: list[CuratedAnswer]):
    import httpx
    base = args.url.rstrip("/") + "/admin/api/answers"
    with httpx.Client(headers={"authorization": f"Bearer {args.token or ''}"}, timeout=600) as client:
        if args.action == "import":
            r = client.post(base, json={"answers": [a.model_dump(exclude={"updated"}) for a in records]})
        elif args.action == "export":
            r = client.get(base + "/export")
        elif args.action == "list":
            r = client.get(base, params={"q": args.q, "limit": 1000})
        else:
            r = client.delete(f"{base}/{args.target}")
    if r.status_code != 200:
        raise SystemExit(f"{r.status_code}: {r.text}")
    if args.action == "export":
        return r.text
    return r.json()["answers"] if args.action == "list" else r.json()


async def in_store(args: argparse.Namespace, records: list[CuratedAnswer]):
    from cachegate.build_parts import build_semantic_store, build_semantic_tier
    from cachegate.cache.curated.library import build_library
    from cachegate.settings import load_settings
    settings = load_settings(args.config)
    if settings.cache.semantic.store != "redis":
        raise SystemExit("the configured semantic store is in a gateway's memory: use --url to reach it")
    store = build_semantic_store(settings)
    tier = build_semantic_tier(settings, store)
    library = build_library(settings, tier, store)
    try:
        if args.action == "import":
            outcomes = [await library.put(a) for a in records]
            return {o: outcomes.count(o) for o in ("created", "updated", "unchanged")}
        if args.action == "export":
            return write_jsonl(await library.all())
        if args.action == "list":
            return await library.search(args.q, 1000)
        return {"id": args.target, "deleted": await library.delete(args.target)}
    finally:
        await store.close()

