"""The embedded defaults serve two packaged models in process: `model: "auto"` sends a simple question
to SmolLM2 and a complex one to Gemma 3 270M (a base model answering through its fallback
Question/Answer template, cut before the next question), and the engines report their KV figures."""
from __future__ import annotations

import pytest

from tests.e2e.test_failover import COMPLEX

pytestmark = pytest.mark.slow


def ask_auto(client, content: str):
    return client.chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": content}], temperature=0, max_tokens=48)


def test_auto_routes_a_complex_prompt_to_gemma3_and_a_simple_one_to_smollm2(client):
    hard = ask_auto(client, COMPLEX)
    assert hard.headers["x-cachegate-route"] == "auto:large:gemma3-270m"
    answer = hard.parse().choices[0]
    assert answer.message.content.strip() and "Question:" not in answer.message.content
    easy = ask_auto(client, "Hi!")
    assert easy.headers["x-cachegate-route"] == "auto:small:smollm2-135m-instruct"


def test_gemma3_answers_by_name_through_the_fallback_template(client):
    reply = client.chat.completions.create(
        model="gemma3-270m", messages=[{"role": "user", "content": "What is the capital of France?"}],
        temperature=0, max_tokens=16)
    assert "Paris" in reply.choices[0].message.content
    assert not reply.choices[0].message.content[0].isspace(), "the transcript's 'Answer:' space leaked"
    assert reply.choices[0].finish_reason == "stop" and reply.usage.prompt_tokens > 5
