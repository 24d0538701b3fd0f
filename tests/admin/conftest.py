"""An app with the admin token set, over the stand-in backend, with both tiers on."""
from __future__ import annotations

from collections import Counter

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

TOKEN = "s3cret-admin-token"
ADMIN = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def backend() -> EchoBackend:
    return EchoBackend()


@pytest.fixture
def client(backend):
    settings = make_settings(admin={"token": TOKEN}, cache={"semantic": {"policy": "cosine", "threshold": 0.9}},
                             models=[{"name": "echo", "price_in_per_1k": 1.0, "price_out_per_1k": 2.0}])
    with TestClient(create_app(settings, backends={"echo": backend})) as c:
        yield c


def chat(client, content, **kw):
    return client.post("/v1/chat/completions",
                       json={"model": "echo", "messages": [{"role": "user", "content": content}]} | kw)


QUESTIONS = ["How do I reset my password?", "What are your opening hours?", "Where is my parcel right now?",
             "How do I reset my password?", "What are your opening hours?", "How can I reset my password?"]


def traffic(client) -> Counter:
    """Misses, exact hits, (likely) a semantic hit and one bad request; returns what the headers said."""
    seen = Counter(chat(client, q).headers["x-cachegate-cache"] for q in QUESTIONS)
    assert chat(client, "bad", temperature=9).status_code == 400
    seen["error"] += 1
    return seen
