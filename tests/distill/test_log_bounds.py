"""Each tenant's log stays within its entry and byte bounds, oldest entries first to go, and one
tenant's flood never pushes out another tenant's entries: in files and in Redis alike."""
from __future__ import annotations

import uuid

import pytest

from cachegate.distill.entry import AnswerEntry
from cachegate.distill.sinks import FileSink, RedisSink, read_entries, tenant_file
from cachegate.stores.redis import connect


def entry(i: int, tenant: str = "acme", size: int = 10) -> AnswerEntry:
    return AnswerEntry(tenant=tenant, namespace="default", model="large-m", answer=f"{i:04d}" + "x" * size,
                       messages=[{"role": "user", "content": f"question {i}"}])


def numbers(entries: list[AnswerEntry]) -> list[int]:
    return [int(e.answer[:4]) for e in entries]


async def fill(sink, n: int, tenant: str = "acme", size: int = 10) -> None:
    for i in range(n):
        await sink.append(entry(i, tenant, size))


async def test_file_log_keeps_at_most_max_entries_newest_last(tmp_path):
    sink = FileSink(tmp_path, max_entries=6, max_bytes=1 << 20)
    await fill(sink, 20)
    kept = numbers(read_entries(tmp_path))
    assert len(kept) <= 6 and kept == sorted(kept) and kept[-1] == 19
    assert len(kept) >= 3                      # rotation drops at most half at once


async def test_file_log_keeps_within_max_bytes(tmp_path):
    sink = FileSink(tmp_path, max_entries=10_000, max_bytes=4000)
    await fill(sink, 100, size=200)
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= 4000
    assert numbers(read_entries(tmp_path))[-1] == 99
    assert not await sink.append(entry(100, size=5000))       # one entry over half the bound: refused


async def test_file_log_bounds_each_tenant_apart(tmp_path):
    sink = FileSink(tmp_path, max_entries=4, max_bytes=1 << 20)
    await sink.append(entry(7, tenant="globex"))
    await fill(sink, 50, tenant="acme")
    assert numbers(read_entries(tmp_path, tenant="globex")) == [7]
    assert all(e.tenant == "acme" for e in read_entries(tmp_path, tenant="acme"))


async def test_file_log_picks_up_its_counts_after_a_restart(tmp_path):
    await fill(FileSink(tmp_path, max_entries=6, max_bytes=1 << 20), 3)
    await fill(FileSink(tmp_path, max_entries=6, max_bytes=1 << 20), 20)
    assert len(read_entries(tmp_path)) <= 6


def test_tenant_files_never_collide():
    names = {tenant_file(t) for t in ("acme", "ACME", "a/c/m/e", "../acme", "acme ", "")}
    assert len(names) == 6 and all("/" not in n and not n.startswith(".") for n in names)


@pytest.fixture
def redis_sink(redis_url):
    def make(max_entries: int, max_bytes: int) -> RedisSink:
        return RedisSink(connect(redis_url), f"test-{uuid.uuid4().hex[:8]}:", max_entries, max_bytes)
    return make


@pytest.mark.redis
async def test_redis_log_bounds_entries_bytes_and_tenants(redis_sink, redis_url):
    sink = redis_sink(5, 1 << 20)
    await sink.append(entry(7, tenant="globex"))
    await fill(sink, 30)
    url = f"{redis_url}?prefix={sink.prefix}"
    assert numbers(read_entries(url, tenant="acme")) == [25, 26, 27, 28, 29]
    assert numbers(read_entries(url, tenant="globex")) == [7]
    small = redis_sink(1000, 2000)
    await fill(small, 50, size=200)
    kept = read_entries(f"{redis_url}?prefix={small.prefix}")
    assert sum(len(e.to_line().encode()) for e in kept) <= 2000 and numbers(kept)[-1] == 49
    await sink.close()
    await small.close()
