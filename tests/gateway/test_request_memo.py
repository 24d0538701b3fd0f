"""Bodies seen byte for byte before skip parsing, never the checks that depend on who sends them or how:
keys, rate limits, cache controls and tenants apply to every request; invalid bodies are never kept."""
from __future__ import annotations

import json

from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from cachegate.api.request_memo import RequestMemo
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

BODY = json.dumps({"model": "echo", "messages": [{"role": "user", "content": "memo me"}]})


def post(client, body=BODY, **headers):
    return client.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"} | headers)


def test_a_repeated_body_is_parsed_once_and_still_honours_its_headers():
    keys = [{"key": "sk-a", "tenant": "a", "requests_per_minute": 3}, {"key": "sk-b", "tenant": "b"}]
    settings = make_settings(auth={"keys": keys}, cache={"semantic": {"enabled": False}})
    with TestClient(create_app(settings, backends={"echo": EchoBackend()})) as client:
        a = [post(client, authorization="Bearer sk-a").headers.get("x-cachegate-cache") for _ in range(2)]
        fresh = post(client, authorization="Bearer sk-a", **{"cache-control": "no-cache"})
        limited = post(client, authorization="Bearer sk-a")
        b = post(client, authorization="Bearer sk-b")
        memo = client.app.state.requests
    assert a == ["miss", "hit-exact"] and fresh.headers["x-cachegate-cache"] == "bypass"
    assert limited.status_code == 429
    assert b.headers["x-cachegate-cache"] == "miss"          # another tenant: its own entry
    assert memo.hits == 4


def test_invalid_bodies_are_refused_every_time_and_never_kept(client):
    bad = json.dumps({"model": "echo", "messages": [{"role": "user", "content": "x"}], "temperature": 7})
    assert [post(client, bad).status_code for _ in range(3)] == [400, 400, 400]
    assert len(client.app.state.requests.parsed) == 0


def test_the_memo_is_bounded_in_entries_and_body_size():
    memo = RequestMemo(entries=3, max_body_bytes=10)
    for i in range(5):
        memo.put("chat", f"body {i}".encode(), i)
    memo.put("chat", b"x" * 11, "too large")
    assert list(memo.parsed) == [("chat", b"body 2"), ("chat", b"body 3"), ("chat", b"body 4")]
    assert memo.get("chat", b"x" * 11) is None and memo.get("completions", b"body 4") is None
