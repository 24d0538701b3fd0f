"""The semantic tier through the app: paraphrases hit, look-alikes and other scopes never do."""
from __future__ import annotations

import json

import pytest

from tests.semantic.conftest import answer, ask

QUESTION = "How can I reset my email password?"
PARAPHRASE = "How do I reset my email password?"


def sse_text(response) -> str:
    events = [json.loads(line[6:]) for line in response.text.split("\n")
              if line.startswith("data: ") and line != "data: [DONE]"]
    return "".join(e["choices"][0]["delta"].get("content", "") for e in events if e["choices"])


def test_paraphrase_hits_semantic_tier(client, backend):
    first = ask(client, QUESTION)
    second = ask(client, PARAPHRASE)
    assert first.headers["x-cachegate-cache"] == "miss"
    assert second.headers["x-cachegate-cache"] == "hit-semantic"
    assert answer(second) == answer(first) == f"echo: {QUESTION}"
    assert 0.9 < float(second.headers["x-cachegate-similarity"]) < 1.0
    assert len(second.headers["x-cachegate-entry"]) == 16
    assert backend.calls == 1


@pytest.mark.parametrize("other", [
    "How can I reset my bank password?",                 # a named thing differs
    "How can I change my email address?",                # a related, different question
    "What is the capital of France?",                    # unrelated
])
def test_unrelated_and_near_miss_questions_do_not_hit(client, backend, other):
    ask(client, QUESTION)
    assert ask(client, other).headers["x-cachegate-cache"] == "miss"
    assert backend.calls == 2


def test_numbers_that_differ_do_not_hit(client):
    ask(client, "What is a good workout routine for a 24 year old?")
    assert ask(client, "What is a good workout routine for a 64 year old?").headers["x-cachegate-cache"] == "miss"


def test_other_system_prompt_never_hits(client):
    ask(client, QUESTION, system="Answer in French.")
    assert ask(client, PARAPHRASE, system="Answer in German.").headers["x-cachegate-cache"] == "miss"
    assert ask(client, PARAPHRASE, system="Answer in French.").headers["x-cachegate-cache"] == "hit-semantic"


def test_other_model_never_hits(backend):
    from fastapi.testclient import TestClient

    from cachegate.api.app import create_app
    from tests.gateway.conftest import make_settings
    from tests.support.fake_backend import EchoBackend
    other = EchoBackend(name="echo-large", tier="large")
    app = create_app(make_settings(models=[{"name": "echo"}, {"name": "echo-large"}]),
                     backends={"echo": backend, "echo-large": other})
    with TestClient(app) as client:
        ask(client, QUESTION)
        assert ask(client, PARAPHRASE, model="echo-large").headers["x-cachegate-cache"] == "miss"
        assert other.calls == 1


def test_other_tenant_never_hits(backend):
    from fastapi.testclient import TestClient

    from cachegate.api.app import create_app
    from tests.gateway.conftest import make_settings
    keys = [{"key": "sk-acme", "tenant": "acme"}, {"key": "sk-globex", "tenant": "globex"}]
    with TestClient(create_app(make_settings(auth={"keys": keys}), backends={"echo": backend})) as client:
        def key(k):
            return {"authorization": f"Bearer {k}"}
        ask(client, QUESTION, headers=key("sk-acme"))
        assert ask(client, PARAPHRASE, headers=key("sk-globex")).headers["x-cachegate-cache"] == "miss"
        assert ask(client, PARAPHRASE, headers=key("sk-acme")).headers["x-cachegate-cache"] == "hit-semantic"


def test_other_sampling_parameters_never_hit(client):
    ask(client, QUESTION, temperature=0.0)
    assert ask(client, PARAPHRASE, temperature=0.7).headers["x-cachegate-cache"] == "miss"


def test_follow_up_is_only_served_within_its_conversation(client, backend):
    einstein = [{"role": "user", "content": "Who developed the theory of relativity?"},
                {"role": "assistant", "content": "Albert Einstein developed the theory of relativity."}]
    newton = [{"role": "user", "content": "Who formulated the laws of motion?"},
              {"role": "assistant", "content": "Isaac Newton formulated the three laws of motion."}]
    ask(client, "How old was he when he died?", history=einstein)
    assert ask(client, "How old was he when he died?", history=newton).headers["x-cachegate-cache"] == "miss"
    assert ask(client, "How old was he when he died?").headers["x-cachegate-cache"] == "miss"
    again = ask(client, "how old was he when he died", history=einstein)   # not the exact tier's key
    assert again.headers["x-cachegate-cache"] == "hit-semantic"
    assert backend.calls == 3


def test_a_fresh_question_does_not_hit_a_follow_up_entry(client):
    history = [{"role": "user", "content": "Tell me about Paris."},
               {"role": "assistant", "content": "Paris is the capital of France."}]
    ask(client, "What famous landmark can you find there?", history=history)
    assert ask(client, "What famous landmark can you find there?").headers["x-cachegate-cache"] == "miss"


def test_semantic_hit_streams_like_a_fresh_answer(client):
    ask(client, QUESTION)
    r = ask(client, PARAPHRASE, stream=True, stream_options={"include_usage": True})
    assert r.headers["x-cachegate-cache"] == "hit-semantic"
    assert r.headers["content-type"].startswith("text/event-stream")
    assert sse_text(r) == f"echo: {QUESTION}"
    usage = [json.loads(line[6:]) for line in r.text.split("\n") if line.startswith("data: {")][-1]
    assert usage["usage"]["completion_tokens"] == len(f"echo: {QUESTION}".split()) and usage["choices"] == []


def test_entries_expire_after_their_ttl(client, tier, monkeypatch):
    import time as clock
    ask(client, QUESTION, cache={"ttl": 60})
    later = clock.time() + 120
    monkeypatch.setattr("cachegate.cache.semantic.lookup.time.time", lambda: later)
    monkeypatch.setattr("cachegate.pipeline.time.time", lambda: later)
    assert ask(client, PARAPHRASE).headers["x-cachegate-cache"] == "miss"
    assert tier.sweep() >= 1


def test_namespace_ttl_bounds_the_entry(backend):
    from fastapi.testclient import TestClient

    from cachegate.api.app import create_app
    from tests.gateway.conftest import make_settings
    settings = make_settings(cache={"semantic": {"namespaces": {"short": {"ttl_s": 5}}}})
    with TestClient(create_app(settings, backends={"echo": backend})) as client:
        ask(client, QUESTION, cache={"namespace": "short"})
        ask(client, QUESTION)
        metas = client.app.state.services.semantic.catalog.meta.values()
        lifetimes = sorted(round(m.expires_at - m.created) for m in metas)
        assert lifetimes == [5, 3600]
