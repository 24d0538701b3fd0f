"""The README's API section names every cache outcome the gateway reports and every header it sends,
so a user reading it knows what `x-cachegate-cache: joined` or `x-cachegate-entry` mean."""
from __future__ import annotations

import threading
from pathlib import Path

from fastapi.testclient import TestClient

from cachegate.pipeline import OUTCOMES
from tests.semantic.conftest import ask, semantic_app
from tests.support.fake_backend import EchoBackend

README = Path(__file__).resolve().parents[2] / "README.md"


def api_section() -> str:
    text = README.read_text()
    return text[text.index("## API"):text.index("## Tenants, keys and limits")]


def test_every_cache_outcome_is_documented():
    section = api_section()
    assert all(f"`{outcome}`" in section for outcome in OUTCOMES), [o for o in OUTCOMES if f"`{o}`" not in section]


def test_every_header_a_response_carries_is_documented():
    with TestClient(semantic_app(EchoBackend(delay_s=0.05), policy="cosine")) as client:
        responses = [ask(client, "How can I reset my email password?"),
                     ask(client, "How can I reset my email password?"),
                     ask(client, "How do I reset my email password?")]
        barrier = threading.Barrier(4)

        def join():
            barrier.wait()
            responses.append(ask(client, "A slow question asked four times at once", temperature=0))
        threads = [threading.Thread(target=join) for _ in range(4)]
        [t.start() for t in threads]
        [t.join() for t in threads]
    sent = {name for r in responses for name in r.headers if name.startswith("x-")}
    assert {"x-cachegate-similarity", "x-cachegate-single-flight"} <= sent
    section = api_section()
    assert [name for name in sorted(sent) if f"`{name}`" not in section] == []
    assert "`Cache-Control`" in section and "`tier:model`" in section
