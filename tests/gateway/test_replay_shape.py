"""A cached answer streams back in the shape a fresh one had: one chunk per piece the backend sent,
usage last; with `cache.replay_pacing: original` at the backend's own pace."""
from __future__ import annotations

import json
import time

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from cachegate.backends.base import Usage
from cachegate.cache.answer import CachedAnswer
from cachegate.pipeline import replay
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

QUESTION = "one two three four five six seven eight"


def stream(client) -> tuple[list[dict], float]:
    started = time.perf_counter()
    r = client.post("/v1/chat/completions", json={"model": "echo", "stream": True,
                                                  "stream_options": {"include_usage": True},
                                                  "messages": [{"role": "user", "content": QUESTION}]})
    events = [json.loads(line[6:]) for line in r.text.split("\n") if line.startswith("data: {")]
    return events, time.perf_counter() - started


def contents(events: list[dict]) -> list[str]:
    return [e["choices"][0]["delta"]["content"] for e in events
            if e["choices"] and e["choices"][0]["delta"].get("content")]


@pytest.mark.parametrize("pacing", ["none", "original"])
def test_a_replayed_stream_has_the_chunks_of_the_fresh_one(pacing):
    settings = make_settings(cache={"semantic": {"enabled": False}, "replay_pacing": pacing})
    with TestClient(create_app(settings, backends={"echo": EchoBackend(delay_s=0.04)})) as client:
        fresh, fresh_s = stream(client)
        cached, cached_s = stream(client)
    assert contents(cached) == contents(fresh) and len(contents(fresh)) == 9
    assert cached[-1]["usage"] == fresh[-1]["usage"] and not cached[-1]["choices"]
    if pacing == "original":
        assert cached_s > 0.6 * fresh_s
    else:
        assert cached_s < 0.5 * fresh_s


async def test_answers_stored_without_pieces_replay_word_by_word():
    answer = CachedAnswer("Paris is the capital of France.", "stop", "m", Usage(3, 7))
    chunks = [c async for c in replay(answer)]
    assert [c.text for c in chunks[:-1]] == ["Paris ", "is ", "the ", "capital ", "of ", "France."]
    assert chunks[-1].finish_reason == "stop" and chunks[-1].usage == Usage(3, 7)
