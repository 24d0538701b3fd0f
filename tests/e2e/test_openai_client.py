"""The real `openai` client against a live gateway in front of the real engine on SmolLM2 weights."""
from __future__ import annotations

import httpx
import openai
import pytest

from tests.e2e.conftest import MODEL

pytestmark = pytest.mark.slow


def ask(client, content: str, max_tokens: int = 24, **kw):
    return client.chat.completions.with_raw_response.create(
        model=MODEL, messages=[{"role": "user", "content": content}], temperature=0, max_tokens=max_tokens, **kw)


def test_models_lists_smollm2_and_gemma3(client):
    assert [m.id for m in client.models.list().data] == [MODEL, "gemma3-270m"]


def test_models_retrieve_answers_for_a_served_model_and_404s_otherwise(client):
    assert client.models.retrieve("gemma3-270m").id == "gemma3-270m"
    with pytest.raises(openai.NotFoundError) as exc:
        client.models.retrieve("no-such-model")
    assert exc.value.body["code"] == "model_not_found"


def test_chat_answers_and_the_repeat_is_an_exact_hit(client):
    first = ask(client, "What is the capital of France?")
    second = ask(client, "What is the capital of France?")
    assert first.headers["x-cachegate-cache"] == "miss"
    assert second.headers["x-cachegate-cache"] == "hit-exact"
    answer, again = first.parse(), second.parse()
    assert "Paris" in answer.choices[0].message.content
    assert again.choices[0].message.content == answer.choices[0].message.content
    assert answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0
    assert answer.model == MODEL


def test_streamed_chat_equals_its_cached_replay(client):
    question = "Name three colors."
    stream = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": question}], temperature=0, max_tokens=48,
        stream=True, stream_options={"include_usage": True})
    deltas, usage, finish = [], None, None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            deltas.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    streamed = "".join(deltas)
    assert len([d for d in deltas if d]) > 1, "a fresh answer streams in several chunks"
    assert finish == "stop", "only whole answers are stored"
    assert usage.completion_tokens > 0

    replay = ask(client, question, max_tokens=48)
    assert replay.headers["x-cachegate-cache"] == "hit-exact"
    assert replay.parse().choices[0].message.content == streamed

    cached_stream = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": question}], temperature=0, max_tokens=48, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in cached_stream if c.choices) == streamed


def test_usage_reports_the_prompt_tokens_the_engine_reused(client):
    """A second question under the same long system prompt reuses its KV blocks; OpenAI's
    usage.prompt_tokens_details.cached_tokens says how many prompt tokens that was."""
    system = ("You are the support assistant of Larkspur Outfitters, a shop for hiking boots and tents. "
              "Answer in one short sentence, politely, and never invent order numbers. ") * 3

    def chat(question: str):
        return client.chat.completions.create(
            model=MODEL, temperature=0, max_tokens=8,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": question}])

    cold, warm = chat("Do you sell tents for four people?"), chat("How long does shipping to Oslo take?")
    assert cold.usage.prompt_tokens_details.cached_tokens == 0
    reused = warm.usage.prompt_tokens_details.cached_tokens
    assert 64 <= reused < warm.usage.prompt_tokens and reused % 16 == 0    # whole blocks of the system prompt


def test_completions_endpoint(client):
    prompt = "def fibonacci(n):\n"
    first = client.completions.with_raw_response.create(model=MODEL, prompt=prompt, max_tokens=16, temperature=0)
    second = client.completions.with_raw_response.create(model=MODEL, prompt=prompt, max_tokens=16, temperature=0)
    assert first.parse().choices[0].text
    assert second.headers["x-cachegate-cache"] == "hit-exact"
    assert second.parse().choices[0].text == first.parse().choices[0].text
    assert first.parse().choices[0].finish_reason == "length"


def test_stop_strings_and_max_tokens(client):
    r = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Count from 1 to 10."}],
                                       temperature=0, max_tokens=40, stop=["5"])
    text = r.choices[0].message.content
    assert "5" not in text and r.choices[0].finish_reason == "stop"
    r = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Tell me a story."}],
                                       temperature=0, max_tokens=3)
    assert r.choices[0].finish_reason == "length" and r.usage.completion_tokens == 3


def test_bad_input_raises_openai_errors(client):
    with pytest.raises(openai.BadRequestError) as exc:
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "x"}], temperature=5)
    assert exc.value.body["param"] == "temperature"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.BadRequestError) as exc:
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hello " * 9000}])
    assert exc.value.body["code"] == "context_length_exceeded"


def test_stream_error_before_first_token_is_a_plain_4xx(client):
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True,
                                       max_tokens=10_000)


def test_healthz(live_gateway):
    body = httpx.get(live_gateway.url + "/healthz").json()
    assert body["status"] == "ok" and body["models"] == [MODEL, "gemma3-270m"]

