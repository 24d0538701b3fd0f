"""`cachegate keys add|revoke|list --redis-url URL`: API keys kept in Redis (for `auth.redis_keys`).

A new key is printed once and stored only as its SHA-256 (`<prefix>apikey:<sha256>` hash holding the
tenant and its limits), so Redis never holds a usable secret."""
from __future__ import annotations

import argparse
import os
import secrets

from cachegate.access.auth import digest


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["add", "revoke", "list"])
    p.add_argument("--redis-url", default=os.environ.get("CACHEGATE_REDIS__URL", "redis://127.0.0.1:6379/0"))
    p.add_argument("--prefix", default="cachegate:")
    p.add_argument("--tenant", help="add: the tenant the key belongs to")
    p.add_argument("--key", help="add: use this key instead of a generated one; revoke: the key to revoke")
    p.add_argument("--sha256", help="revoke: the key's SHA-256 instead of the key")
    p.add_argument("--rpm", type=int, help="add: requests per minute")
    p.add_argument("--tpm", type=int, help="add: tokens per minute")


def run(args: argparse.Namespace) -> int:
    import redis
    client = redis.Redis.from_url(args.redis_url)
    if args.action == "add":
        if not args.tenant:
            raise SystemExit("keys add needs --tenant")
        key = args.key or "sk-cg-" + secrets.token_urlsafe(24)
        fields = {"tenant": args.tenant, "requests_per_minute": args.rpm or "", "tokens_per_minute": args.tpm or ""}
        client.hset(f"{args.prefix}apikey:{digest(key)}", mapping=fields)
        print(key)
        return 0
    if args.action == "revoke":
        sha = args.sha256 or (digest(args.key) if args.key else None)
        if not sha:
            raise SystemExit("keys revoke needs --key or --sha256")
        removed = client.delete(f"{args.prefix}apikey:{sha}")
        print(f"revoked {sha[:16]}" if removed else f"no key {sha[:16]}")
        return 0 if removed else 1
    for name in client.scan_iter(match=f"{args.prefix}apikey:*"):
        row = {k.decode(): v.decode() for k, v in client.hgetall(name).items()}
        print(f"{name.decode().rsplit(':', 1)[1][:16]}  tenant={row.get('tenant')}  "
              f"rpm={row.get('requests_per_minute') or '-'}  tpm={row.get('tokens_per_minute') or '-'}")
    return 0
