"""Bad input gets an OpenAI-shaped 4xx naming what is wrong, never a 500, and stores nothing."""
from __future__ import annotations

import pytest

from tests.gateway.conftest import chat


def assert_openai_error(response, status: int, param: str | None = None):
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"]
    if param is not None:
        assert error["param"] == param
    return error


def test_malformed_json_is_400(client):
    r = client.post("/v1/chat/completions", content=b'{"model": "echo", "messages": [',
                    headers={"content-type": "application/json"})
    error = assert_openai_error(r, 400)
    assert "JSON" in error["message"]


def test_body_that_is_not_an_object_is_400(client):
    assert_openai_error(client.post("/v1/chat/completions", json=[1, 2]), 400)


def test_missing_messages_is_400(client):
    error = assert_openai_error(client.post("/v1/chat/completions", json={"model": "echo"}), 400, "messages")
    assert error["code"] == "missing_required_parameter"


def test_missing_model_is_400(client):
    body = {"messages": [{"role": "user", "content": "hi"}]}
    assert_openai_error(client.post("/v1/chat/completions", json=body), 400, "model")


@pytest.mark.parametrize("field,value,param", [
    ("messages", "hello", "messages"),
    ("messages", [], "messages"),
    ("messages", [{"role": "wizard", "content": "x"}], "messages.0.role"),
    ("messages", [{"role": "user"}], "messages.0"),
    ("temperature", "hot", "temperature"),
    ("max_tokens", "many", "max_tokens"),
    ("stream", "yes please", "stream"),
    ("stop", 5, "stop"),
])
def test_wrong_typed_fields_are_400(client, field, value, param):
    body = {"model": "echo", "messages": [{"role": "user", "content": "hi"}], field: value}
    error = assert_openai_error(client.post("/v1/chat/completions", json=body), 400)
    assert error["param"].startswith(param)


@pytest.mark.parametrize("field,value", [
    ("temperature", -0.1), ("temperature", 2.5), ("top_p", 0), ("top_p", 1.5), ("max_tokens", 0),
    ("max_tokens", -5), ("n", 2), ("stop", ["a", "b", "c", "d", "e"]), ("top_k", -2),
    ("presence_penalty", 3), ("frequency_penalty", 0.5),
])
def test_out_of_range_parameters_are_400(client, field, value):
    error = assert_openai_error(chat(client, **{field: value}), 400, field)
    assert field in error["message"]


def test_unknown_model_is_404(client):
    body = {"model": "gpt-17", "messages": [{"role": "user", "content": "hi"}]}
    error = assert_openai_error(client.post("/v1/chat/completions", json=body), 404, "model")
    assert error["code"] == "model_not_found"


def test_prompt_longer_than_context_is_400(client, backend):
    error = assert_openai_error(chat(client, "word " * 1000), 400)
    assert error["code"] == "context_length_exceeded"


def test_completion_prompt_list_of_several_is_400(client):
    r = client.post("/v1/completions", json={"model": "echo", "prompt": ["a", "b"]})
    assert_openai_error(r, 400, "prompt")


def test_unsupported_content_part_is_400(client):
    parts = [{"type": "image_url", "image_url": {"url": "http://x"}}]
    error = assert_openai_error(chat(client, parts), 400, "messages.0.content.0")
    assert "image_url" in error["message"]


def test_oversized_body_is_413(client):
    r = client.post("/v1/chat/completions", content=b"x" * (5 * 1024 * 1024),
                    headers={"content-type": "application/json"})
    assert_openai_error(r, 413)


def test_unknown_route_is_openai_shaped_404(client):
    assert_openai_error(client.get("/v1/nothing-here"), 404)


def test_errors_are_never_stored(client, backend):
    backend.fail_before = True
    assert_openai_error(chat(client, "flaky"), 503)
    backend.fail_before = False
    r = chat(client, "flaky")
    assert r.status_code == 200
    assert r.headers["x-cachegate-cache"] == "miss"


def test_bad_request_loses_nothing_already_stored(client):
    first = chat(client, "keep me")
    chat(client, temperature="nope")
    client.post("/v1/chat/completions", content=b"{{{", headers={"content-type": "application/json"})
    again = chat(client, "keep me")
    assert again.headers["x-cachegate-cache"] == "hit-exact"
    assert again.json()["choices"][0]["message"] == first.json()["choices"][0]["message"]


def test_unknown_fields_are_ignored(client):
    r = chat(client, parallel_tool_calls=True, store=False, service_tier="auto")
    assert r.status_code == 200
