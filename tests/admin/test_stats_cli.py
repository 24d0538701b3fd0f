"""`cachegate stats` against a live gateway prints the dashboard's summary, and fails clearly without
the token."""
from __future__ import annotations

import re

import httpx
import pytest

from cachegate.api.app import create_app
from cachegate.commands.main import main
from tests.admin.conftest import TOKEN
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend
from tests.support.live_server import LiveServer


@pytest.fixture(scope="module")
def server():
    settings = make_settings(admin={"token": TOKEN}, cache={"semantic": {"enabled": False}})
    with LiveServer(create_app(settings, backends={"echo": EchoBackend()})) as live:
        body = {"model": "echo", "messages": [{"role": "user", "content": "hello"}]}
        for _ in range(3):
            httpx.post(live.url + "/v1/chat/completions", json=body)
        yield live


def test_stats_prints_the_summary(server, capsys):
    assert main(["stats", "--url", server.url, "--token", TOKEN]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^requests \(last hour\)\s+3$", out, re.M)
    assert "hit rate" in out and "66.7%" in out
    assert re.search(r"^echo#0\s+circuit closed", out, re.M)


def test_stats_json(server, capsys):
    import json
    assert main(["stats", "--url", server.url, "--token", TOKEN, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["totals"]["by_cache"]["hit-exact"] == 2


def test_stats_without_the_token_fails_with_the_reason(server, capsys):
    assert main(["stats", "--url", server.url, "--token", "nope"]) == 1
    assert "401" in capsys.readouterr().err
