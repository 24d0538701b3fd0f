"""Where the answer log keeps its entries, each tenant apart and bounded: a folder of JSONL files (one per
tenant, rotated in two halves) or Redis lists (one per tenant, trimmed oldest-first by a Lua script).

Both bound each tenant by entries and bytes: past either bound the oldest entries go.
"""
from __future__ import annotations

import hashlib
import os
import re
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit, urlunsplit

from cachegate.distill.entry import AnswerEntry, parse_line, read_lines


def tenant_file(tenant: str) -> str:
    """A file name that is safe whatever the tenant is called, and never shared by two tenants."""
    slug = re.sub(r"[^a-z0-9_-]+", "-", tenant.lower()).strip("-")[:40] or "tenant"
    return f"{slug}-{hashlib.sha256(tenant.encode()).hexdigest()[:10]}.jsonl"


class FileSink:
    """Each tenant: `<name>.jsonl` (current) and `<name>.1.jsonl` (older), each holding at most half of
    the bounds; when the current one is full it replaces the older one. One gateway process per folder."""

    def __init__(self, folder: str | Path, max_entries: int, max_bytes: int) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.half_entries, self.half_bytes = max(1, max_entries // 2), max(1, max_bytes // 2)
        self.sizes: dict[str, list[int]] = {}          # tenant -> [entries, bytes] of its current file
        self.lock = threading.Lock()

    async def append(self, entry: AnswerEntry) -> bool:
        line = (entry.to_line() + "\n").encode()
        if len(line) > self.half_bytes:
            return False
        with self.lock:
            path = self.folder / tenant_file(entry.tenant)
            size = self.sizes.get(entry.tenant) or self._measure(path)
            if size[0] + 1 > self.half_entries or size[1] + len(line) > self.half_bytes:
                os.replace(path, path.with_suffix(".1.jsonl"))
                size = [0, 0]
            with path.open("ab") as f:
                f.write(line)
            self.sizes[entry.tenant] = [size[0] + 1, size[1] + len(line)]
        return True

    @staticmethod
    def _measure(path: Path) -> list[int]:
        if not path.is_file():
            return [0, 0]
        data = path.read_bytes()
        return [data.count(b"\n"), len(data)]

    async def close(self) -> None:
        return None


# KEYS: the tenant's list, its byte counter. ARGV: entry, max entries, max bytes. Oldest entries go first.
TRIM = """
redis.call('LPUSH', KEYS[1], ARGV[1])
local total = redis.call('INCRBY', KEYS[2], string.len(ARGV[1]))
local n = redis.call('LLEN', KEYS[1])
while n > tonumber(ARGV[2]) or total > tonumber(ARGV[3]) do
  local old = redis.call('RPOP', KEYS[1])
  if not old then break end
  total = redis.call('DECRBY', KEYS[2], string.len(old))
  n = n - 1
end
return n
"""


def redis_keys(prefix: str, tenant: str) -> tuple[str, str]:
    """The tenant's list and byte counter; the hash tag keeps both in one Redis Cluster slot."""
    tag = hashlib.sha256(tenant.encode()).hexdigest()[:16]
    return f"{prefix}distill:{{{tag}}}:log", f"{prefix}distill:{{{tag}}}:bytes"


class RedisSink:
    def __init__(self, client, prefix: str, max_entries: int, max_bytes: int, owns_client: bool = True) -> None:
        self.client, self.prefix, self.owns_client = client, prefix, owns_client
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self.script = client.register_script(TRIM)

    async def append(self, entry: AnswerEntry) -> bool:
        line = entry.to_line()
        if len(line.encode()) > self.max_bytes:
            return False
        await self.script(keys=list(redis_keys(self.prefix, entry.tenant)),
                          args=[line, self.max_entries, self.max_bytes])
        return True

    async def close(self) -> None:
        if self.owns_client:
            await self.client.aclose()


def read_redis(url: str, tenant: str | None = None) -> list[AnswerEntry]:
    """Every tenant's entries (or one tenant's), oldest first. `?prefix=` names the key prefix
    (default `cachegate:`, as `redis.key_prefix`)."""
    import redis
    parts = urlsplit(url)
    prefix = parse_qs(parts.query).get("prefix", ["cachegate:"])[0]
    client = redis.Redis.from_url(urlunsplit(parts._replace(query="")))
    try:
        keys = [redis_keys(prefix, tenant)[0]] if tenant is not None else \
            sorted(client.scan_iter(match=f"{prefix}distill:*:log"))
        lines = [raw.decode() for key in keys for raw in reversed(client.lrange(key, 0, -1))]
    finally:
        client.close()
    return [e for e in map(parse_line, lines) if e is not None]


def read_entries(source: str | Path, tenant: str | None = None) -> list[AnswerEntry]:
    """Entries from a JSONL file, a file-log folder (every tenant's files, oldest first) or a redis:// URL
    (`redis://host:port/db?prefix=cachegate:`); only `tenant`'s when given."""
    text = str(source)
    if text.startswith(("redis://", "rediss://", "unix://")):
        entries = read_redis(text, tenant)
    else:
        path = Path(source)
        files = log_files(path) if path.is_dir() else [path]
        entries = [e for f in files for e in read_lines(f.open(encoding="utf-8"))]
    return [e for e in entries if tenant is None or e.tenant == tenant]


def log_files(folder: Path) -> list[Path]:
    """A file log's segments, each tenant's older segment (`.1.jsonl`) before its current one."""
    current = sorted(p for p in folder.glob("*.jsonl") if not p.name.endswith(".1.jsonl"))
    return [f for p in current for f in (p.with_suffix(".1.jsonl"), p) if f.is_file()]
