"""`cachegate answers`: a library file into a running gateway through its admin API, or straight into a
Redis store that every replica follows; list, export, delete."""
from __future__ import annotations

import json
import uuid

import httpx
import pytest
import yaml
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from cachegate.commands.main import main
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend
from tests.support.live_server import LiveServer
from tests.support.polling import until

TOKEN = "admin-token-for-tests"
LIBRARY = [{"id": "reset", "questions": ["How do I reset my password?", "I forgot my password"],
            "answer": "Use the 'Forgot password' link."},
           {"id": "ship", "questions": ["Do you ship to Canada?"], "answer": "Yes, in five days."}]


def ask(url: str, content: str) -> httpx.Response:
    return httpx.post(url + "/v1/chat/completions", timeout=30, json={
        "model": "echo", "messages": [{"role": "user", "content": content}]})


def test_import_list_export_delete_through_a_running_gateway(tmp_path, capsys):
    library = tmp_path / "library.jsonl"
    library.write_text("".join(json.dumps(a) + "\n" for a in LIBRARY))
    settings = make_settings(admin={"token": TOKEN}, cache={"semantic": {"policy": "cosine", "threshold": 0.85}})
    with LiveServer(create_app(settings, backends={"echo": EchoBackend()})) as server:
        common = ["--url", server.url, "--token", TOKEN]
        assert main(["answers", "import", str(library), *common]) == 0
        assert json.loads(capsys.readouterr().out) == {"created": 2, "updated": 0, "unchanged": 0}
        assert ask(server.url, "how do i reset my password").headers["x-cachegate-cache"] == "hit-curated"
        main(["answers", "list", *common])
        listed = capsys.readouterr().out
        main(["answers", "export", "--out", str(tmp_path / "out.jsonl"), *common])
        main(["answers", "delete", "ship", *common])
        assert json.loads(capsys.readouterr().out) == {"id": "ship", "deleted": True}
        assert ask(server.url, "Do you ship to Canada?").headers["x-cachegate-cache"] == "miss"
    assert "reset" in listed and "1 hits" in listed
    assert [json.loads(line)["id"] for line in (tmp_path / "out.jsonl").read_text().splitlines()] == ["reset", "ship"]


@pytest.mark.redis
def test_import_straight_into_redis_reaches_every_replica(tmp_path, capsys, redis_url):
    prefix = f"curated-{uuid.uuid4().hex[:8]}:"
    config = {"redis": {"url": redis_url, "key_prefix": prefix, "retry_interval_s": 0.1},
              "cache": {"exact": {"store": "redis"}, "semantic": {"store": "redis", "policy": "cosine",
                                                                  "threshold": 0.85}}}
    (tmp_path / "cachegate.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "library.csv").write_text("id,question,answer\nreset,How do I reset my password?,Use the link.\n"
                                          "reset,I forgot my password,Use the link.\n")
    with TestClient(create_app(make_settings(**config), backends={"echo": EchoBackend()})) as one, \
            TestClient(create_app(make_settings(**config), backends={"echo": EchoBackend()})) as two:
        assert main(["answers", "import", str(tmp_path / "library.csv"), "--config", str(tmp_path / "cachegate.yaml")]) == 0
        assert json.loads(capsys.readouterr().out)["created"] == 1

        def outcomes():
            return [c.post("/v1/chat/completions", json={"model": "echo", "messages": [
                {"role": "user", "content": "how do i reset my password"}]}).headers["x-cachegate-cache"]
                for c in (one, two)]
        assert until(lambda: outcomes() == ["hit-curated", "hit-curated"])
