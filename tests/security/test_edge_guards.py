"""The HTTP edge under abuse: bodies too large however they are framed, slow clients, too many requests
at once, hostile JSON and cache headers, and non-JSON bodies a web page could send cross-origin. Each is
a quick OpenAI-shaped 4xx/503 (counted in /metrics) or a closed connection, never a 500 or a hang."""
from __future__ import annotations

import asyncio
import socket
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend
from tests.support.live_server import LiveServer

BODY = {"model": "echo", "messages": [{"role": "user", "content": "hello"}]}


def app(backend: EchoBackend | None = None, **server):
    settings = make_settings(server=server, cache={"semantic": {"enabled": False}})
    return create_app(settings, backends={"echo": backend or EchoBackend()}), settings


@pytest.fixture
def client():
    with TestClient(app()[0]) as c:
        yield c


def metric(client, status: str) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith("cachegate_requests_total{") and f'status="{status}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.mark.parametrize("header", ["max-age=¹".encode("latin-1"), "s-maxage=²".encode("latin-1"),
                                    b"s-maxage=1e3", b"max-age=-1", b"max-age=" + b"9" * 40])
def test_odd_cache_control_values_are_400s_and_counted(client, header):
    r = client.post("/v1/chat/completions", json=BODY, headers={"cache-control": header})
    assert r.status_code == 400 and r.json()["error"]["param"] == "Cache-Control"
    assert metric(client, "400") == 1


@pytest.mark.parametrize("where", ["body", "tools"])
def test_deeply_nested_json_is_a_400_and_counted(client, where):
    deep = "[" * 50_000 + "]" * 50_000 if where == "body" else None
    if where == "body":
        raw = '{"model": "echo", "messages": [{"role": "user", "content": "hi"}], "x": ' + deep + "}"
    else:
        nested = "{}"
        for _ in range(200):
            nested = '{"type": "object", "properties": {"a": ' + nested + "}}"
        raw = ('{"model": "echo", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function",'
               ' "function": {"name": "f", "parameters": ' + nested + "}}]}")
    r = client.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "too_deeply_nested"
    assert metric(client, "400") == 1


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", None])
def test_bodies_that_are_not_declared_json_are_refused_with_415(client, content_type):
    import json
    headers = {"content-type": content_type} if content_type else {}
    r = client.post("/v1/chat/completions", content=json.dumps(BODY), headers=headers)
    assert r.status_code == 415 and r.json()["error"]["code"] == "unsupported_media_type"
    ok = client.post("/v1/chat/completions", content=json.dumps(BODY),
                     headers={"content-type": "application/json; charset=utf-8"})
    assert ok.status_code == 200


def test_a_chunked_body_is_cut_off_at_the_limit_not_buffered_whole():
    gateway, settings = app(max_body_bytes=1 << 20)
    sent = [0]

    def huge():
        piece = b"x" * 65536
        for _ in range(3200):                  # 200 MiB, chunked: no content-length to pre-check
            sent[0] += len(piece)
            yield piece

    with LiveServer(gateway, settings) as server:
        try:
            r = httpx.post(server.url + "/v1/chat/completions", content=huge(),
                           headers={"content-type": "application/json"}, timeout=30)
            assert r.status_code == 413
        except httpx.HTTPError:
            pass                                # the server closed the connection on a client still sending
        assert httpx.get(server.url + "/healthz").status_code == 200
    assert sent[0] < 64 << 20, f"the client could push {sent[0] >> 20} MiB: the body was read past its limit"


def test_slow_clients_get_408_or_are_closed():
    gateway, settings = app(body_timeout_s=1.0, header_timeout_s=1.0)
    with LiveServer(gateway, settings) as server:
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as body_trickle:
            body_trickle.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json"
                                 b"\r\ncontent-length: 1000\r\n\r\n" + b'{"model": "echo", ')   # 18 of 1000 bytes
            reply = body_trickle.recv(4096)
        assert reply.startswith(b"HTTP/1.1 408") and time.monotonic() - started < 5
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as header_trickle:
            header_trickle.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n")       # never finishes
            assert header_trickle.recv(4096) == b""                                            # closed
        assert time.monotonic() - started < 5


async def test_requests_past_the_in_flight_bound_get_a_quick_503_with_retry_after():
    gateway, settings = app(EchoBackend(delay_s=0.3), max_concurrent_requests=2)
    with LiveServer(gateway, settings) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            async def one(i: int):
                started = time.monotonic()
                r = await client.post("/v1/chat/completions", json=BODY | {
                    "messages": [{"role": "user", "content": f"question {i}"}]})
                return r, time.monotonic() - started
            results = await asyncio.gather(*(one(i) for i in range(8)))
            metrics = (await client.get("/metrics")).text
    refused = [(r, t) for r, t in results if r.status_code == 503]
    assert sum(r.status_code == 200 for r, _ in results) >= 2 and refused
    assert all(r.headers["retry-after"] == "1" and r.json()["error"]["code"] == "overloaded" for r, _ in refused)
    assert max(t for _, t in refused) < 0.3, "a refused request waited for the others"
    assert 'status="503"' in metrics
