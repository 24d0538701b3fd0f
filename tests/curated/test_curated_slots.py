"""A curated answer whose example questions differ in a number serves a question asking for another number, through
the gateway with the packaged matcher; an answer with one example keeps the number veto."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

TOKEN = "admin-token-for-tests"
ADMIN = {"authorization": f"Bearer {TOKEN}"}
BOOKING = "Open Reservations in the app, pick a time and the size of your party, and confirm."
OTHERS = [
    {"id": "lost-card", "answer": "Report a lost card in the app under Cards, then Lost or stolen.",
     "questions": ["How do I report my card as lost?", "I lost my card, what should I do?"]},
    {"id": "hours", "answer": "We are open from nine in the morning to five in the evening.",
     "questions": ["What are your opening hours?", "When do you open on Sundays?"]},
]


def ask(client, content: str):
    return client.post("/v1/chat/completions", json={"model": "echo", "messages": [{"role": "user", "content": content}]})


@pytest.mark.parametrize(("examples", "served"), [
    (["Book a table for 4 at 7pm tonight", "Reserve a table for two people at 8 on Friday"], True),
    (["Book a table for 4 at 7pm tonight"], False),
])
def test_a_booking_for_another_party_gets_the_curated_answer_only_when_its_examples_span_numbers(examples, served):
    library = [{"id": "booking", "answer": BOOKING, "questions": examples}, *OTHERS]
    with TestClient(create_app(make_settings(admin={"token": TOKEN}), backends={"echo": EchoBackend()})) as client:
        assert client.post("/admin/api/answers", headers=ADMIN, json={"answers": library}).json()["created"] == 3
        r = ask(client, "Can you book me a table for 6 at 9pm?")
        assert (r.headers["x-cachegate-cache"] == "hit-curated") is served
        if served:
            assert r.json()["choices"][0]["message"]["content"] == BOOKING
