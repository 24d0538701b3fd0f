"""Curated answers: imported through the admin API (idempotent), matched against all their example
questions by the semantic tier's decision, served as `hit-curated` (streamed when asked), scoped by tenant
and model, never pushed out by learned entries nor replaced by a backend's answer; exported as imported."""
from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from cachegate.cache.curated.records import read_csv, read_jsonl
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

TOKEN = "admin-token-for-tests"
ADMIN = {"authorization": f"Bearer {TOKEN}"}
KEYS = [{"key": "sk-acme", "tenant": "acme"}, {"key": "sk-globex", "tenant": "globex"}]
LIBRARY = [
    {"id": "reset-password", "answer": "Open Settings, then Security, then Reset password.",
     "questions": ["How do I reset my password?", "I forgot my password", "How can I change my password?"]},
    {"id": "acme-hours", "tenant": "acme", "answer": "Acme is open nine to five.",
     "questions": ["What are your opening hours?", "When are you open?"]},
    {"id": "large-only", "model": "large", "answer": "Only the large tier says this.",
     "questions": ["What is the meaning of life?"]},
]


@pytest.fixture
def backend():
    return EchoBackend()


@pytest.fixture
def client(backend):
    settings = make_settings(admin={"token": TOKEN}, auth={"keys": KEYS},
                             cache={"semantic": {"policy": "cosine", "threshold": 0.85, "max_entries": 5}})
    with TestClient(create_app(settings, backends={"echo": backend})) as c:
        assert c.post("/admin/api/answers", headers=ADMIN, json={"answers": LIBRARY}).json() == {
            "created": 3, "updated": 0, "unchanged": 0}
        yield c


def ask(client, content, key="sk-acme", **fields):
    return client.post("/v1/chat/completions", headers={"authorization": f"Bearer {key}"},
                       json={"model": "echo", "messages": [{"role": "user", "content": content}]} | fields)


def test_a_paraphrase_of_an_example_gets_the_curated_answer(client, backend):
    r = ask(client, "how do i reset my password")
    assert r.headers["x-cachegate-cache"] == "hit-curated" and r.headers["x-cachegate-entry"] == "reset-password"
    assert r.json()["choices"][0]["message"]["content"] == LIBRARY[0]["answer"]
    assert backend.calls == 0
    assert client.get("/admin/api/answers/reset-password", headers=ADMIN).json()["hits"] == 1


def test_a_curated_hit_streams_like_a_fresh_answer(client):
    r = ask(client, "I forgot my password", stream=True)
    events = [json.loads(line[6:]) for line in r.text.split("\n") if line.startswith("data: {")]
    pieces = [e["choices"][0]["delta"].get("content") for e in events if e["choices"]]
    assert r.headers["x-cachegate-cache"] == "hit-curated"
    assert "".join(p for p in pieces if p) == LIBRARY[0]["answer"] and len([p for p in pieces if p]) > 3


def test_curated_answers_are_scoped_by_tenant_and_model(client):
    assert ask(client, "When are you open?", key="sk-acme").headers["x-cachegate-cache"] == "hit-curated"
    assert ask(client, "When are you open?", key="sk-globex").headers["x-cachegate-cache"] == "miss"
    assert ask(client, "What is the meaning of life?").headers["x-cachegate-cache"] == "miss"   # echo is small


def test_unrelated_questions_and_conversations_are_not_served(client):
    assert ask(client, "Do you ship to Canada?").headers["x-cachegate-cache"] == "miss"
    follow_up = client.post("/v1/chat/completions", headers={"authorization": "Bearer sk-acme"}, json={
        "model": "echo", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                                      {"role": "user", "content": "How do I reset my password?"}]})
    assert follow_up.headers["x-cachegate-cache"] != "hit-curated"


def test_learned_entries_never_push_curated_ones_out_nor_replace_them(client, backend):
    for i in range(20):                                   # four times the semantic tier's bound of 5
        ask(client, f"Tell me fact number {i} about rivers")
    assert len(client.app.state.services.semantic.catalog) <= 5
    r = ask(client, "How can I change my password?", **{"cache": {"no-cache": True}})
    assert r.headers["x-cachegate-cache"] == "bypass"     # a fresh answer, stored as a learned entry...
    again = ask(client, "how can i change my password")
    assert again.headers["x-cachegate-cache"] == "hit-curated"   # ...the curated answer still comes first
    assert again.json()["choices"][0]["message"]["content"] == LIBRARY[0]["answer"]


def test_reimport_is_idempotent_and_export_round_trips(client):
    again = client.post("/admin/api/answers", headers=ADMIN, json={"answers": LIBRARY})
    assert again.json() == {"created": 0, "updated": 0, "unchanged": 3}
    exported = read_jsonl(client.get("/admin/api/answers/export", headers=ADMIN).text)
    assert {a.id: a.model_dump(exclude_none=True, exclude={"updated"}) for a in exported} == {
        a["id"]: a | {"namespace": "default"} for a in LIBRARY}


def test_editing_and_deleting_an_answer(client):
    edited = LIBRARY[0] | {"answer": "Use the 'Forgot password' link.", "questions": ["How do I reset my password?"]}
    put = client.put("/admin/api/answers/reset-password", headers=ADMIN, json=edited)
    assert put.json()["result"] == "updated"
    assert ask(client, "How do I reset my password?").json()["choices"][0]["message"]["content"] == edited["answer"]
    assert ask(client, "I forgot my password").headers["x-cachegate-cache"] != "hit-curated"   # example removed
    assert client.delete("/admin/api/answers/reset-password", headers=ADMIN).json()["deleted"] is True
    assert ask(client, "How do I reset my password ?").headers["x-cachegate-cache"] != "hit-curated"
    assert client.get("/admin/api/answers/reset-password", headers=ADMIN).status_code == 404


def test_admin_routes_need_the_token(client):
    assert client.get("/admin/api/answers").status_code == 401
    assert client.post("/admin/api/answers", json={"answers": LIBRARY}).status_code == 401


def test_csv_rows_sharing_an_id_make_one_answer():
    text = ("id,question,answer,tenant\nhours,When are you open?,Nine to five.,acme\n"
            "hours,What are your hours?,Nine to five.,acme\nship,Do you ship abroad?,Yes.,\n")
    answers = {a.id: a for a in read_csv(text)}
    assert answers["hours"].questions == ["When are you open?", "What are your hours?"]
    assert answers["hours"].tenant == "acme" and answers["ship"].tenant is None
    with pytest.raises(ValueError, match="row 2"):
        read_csv("id,question,answer\n,q,a\n")
