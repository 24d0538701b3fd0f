"""Structured outputs and tool calling through the real `openai` client, a live gateway and the real
engine: json_object and strict json_schema answers parse and validate (cut short ones too), tools with
tool_choice required and named come back as well-formed tool_calls (whole and streamed), a tool result
turn is answered, and bad schemas or tool choices are a 400.
"""
from __future__ import annotations

import json
import re

import jsonschema
import openai
import pytest

from tests.e2e.conftest import MODEL

pytestmark = pytest.mark.slow
CITY = {"type": "object", "properties": {
    "city": {"type": "string"}, "country": {"type": "string"},
    "population_millions": {"type": "number", "minimum": 0}},
    "required": ["city", "country", "population_millions"], "additionalProperties": False}
SCHEMA_FORMAT = {"type": "json_schema", "json_schema": {"name": "city", "schema": CITY, "strict": True}}
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city", "unit"], "additionalProperties": False}}}
ADD = {"type": "function", "function": {
    "name": "add", "description": "Add two numbers",
    "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                   "required": ["a", "b"], "additionalProperties": False}}}
PARAMETERS = {t["function"]["name"]: t["function"]["parameters"] for t in (WEATHER, ADD)}


def chat(client, content: str, model: str = MODEL, max_tokens: int = 60, **kw):
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": content}],
                                          temperature=0, max_tokens=max_tokens, **kw)


def stream(client, content: str, **kw) -> tuple[str, list[dict], str]:
    """The streamed answer folded the way OpenAI's SDK helpers fold it: (content, tool calls, finish)."""
    text, calls, finish = "", {}, None
    for chunk in chat(client, content, stream=True, **kw):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(delta.index, {"id": None, "name": "", "arguments": ""})
                call["id"] = call["id"] or delta.id
                call["name"] += (delta.function and delta.function.name) or ""
                call["arguments"] += (delta.function and delta.function.arguments) or ""
            finish = choice.finish_reason or finish
    return text, [calls[i] for i in sorted(calls)], finish


def well_formed(name: str, arguments: str) -> dict:
    args = json.loads(arguments)
    jsonschema.validate(args, PARAMETERS[name])
    return args


@pytest.mark.parametrize("model", [MODEL, "gemma3-270m"])
def test_strict_json_schema_answer_validates(client, model):
    reply = chat(client, "Describe Paris as JSON: city, country, population in millions.", model=model,
                 response_format=SCHEMA_FORMAT)
    jsonschema.validate(json.loads(reply.choices[0].message.content), CITY)
    assert reply.choices[0].finish_reason in ("stop", "length")


def test_json_schema_cut_short_by_max_tokens_still_validates_and_says_length(client):
    """Too small a budget for any complete answer is a 400 that says how many tokens one needs; with
    one token more the model is cut short, and its answer is closed in time."""
    ask = "Describe Tokyo as JSON: city, country, population in millions."
    with pytest.raises(openai.BadRequestError) as caught:
        chat(client, ask, response_format=SCHEMA_FORMAT, max_tokens=5)
    assert caught.value.body["param"] == "response_format"
    needed = int(re.search(r"needs up to (\d+) tokens", caught.value.body["message"]).group(1))
    reply = chat(client, ask, response_format=SCHEMA_FORMAT, max_tokens=needed + 1)
    assert reply.choices[0].finish_reason == "length"
    assert reply.usage.completion_tokens <= needed + 1
    jsonschema.validate(json.loads(reply.choices[0].message.content), CITY)


def test_streamed_json_object_is_an_object(client):
    text, calls, finish = stream(client, "Give me a JSON object about a dog.",
                                 response_format={"type": "json_object"}, max_tokens=40)
    assert isinstance(json.loads(text), dict) and not calls and finish in ("stop", "length")


def test_tool_choice_required_returns_a_well_formed_tool_call(client):
    reply = chat(client, "What is the weather in Paris, in celsius?", tools=[WEATHER, ADD],
                 tool_choice="required", parallel_tool_calls=False)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and len(choice.message.tool_calls) == 1
    call = choice.message.tool_calls[0]
    assert call.id.startswith("call_") and call.type == "function"
    well_formed(call.function.name, call.function.arguments)


def test_named_tool_choice_streams_tool_call_deltas(client):
    text, calls, finish = stream(client, "What is 2 plus 3?", tools=[WEATHER, ADD],
                                 tool_choice={"type": "function", "function": {"name": "add"}})
    assert finish == "tool_calls" and not text
    assert len(calls) == 1 and calls[0]["name"] == "add" and calls[0]["id"].startswith("call_")
    assert set(well_formed("add", calls[0]["arguments"])) == {"a", "b"}


def test_a_tool_result_turn_is_answered(client):
    messages = [{"role": "user", "content": "What is the weather in Paris?"},
                {"role": "assistant", "content": None, "tool_calls": [{
                    "id": "call_1", "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "celsius"}'}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature": 21, "sky": "sunny"}'}]
    reply = client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER], temperature=0,
                                           max_tokens=40, tool_choice="none")
    choice = reply.choices[0]
    assert choice.message.content and not choice.message.tool_calls and choice.finish_reason in ("stop", "length")


@pytest.mark.parametrize("kw, param", [
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": 3}}}},
     "response_format"),
    ({"response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "array", "uniqueItems": True}}}}, "response_format"),
    ({"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "nope"}}}, "tool_choice"),
    ({"tool_choice": "required"}, "tool_choice"),
    ({"response_format": {"type": "json_object"}, "stop": ["}"]}, "stop"),
    ({"response_format": {"type": "xml"}}, "response_format"),
])
def test_bad_schemas_and_tool_choices_are_a_400(client, kw, param):
    with pytest.raises(openai.BadRequestError) as caught:
        chat(client, "Hello", **kw)
    assert caught.value.status_code == 400 and caught.value.body["param"] == param


def test_a_greedy_tool_call_answer_replays_from_the_cache_and_never_for_other_tools(client):
    def ask(tools):
        return client.chat.completions.with_raw_response.create(
            model=MODEL, messages=[{"role": "user", "content": "Weather in Oslo, in celsius?"}], tools=tools,
            tool_choice="required", parallel_tool_calls=False, temperature=0, max_tokens=60)
    first, again, other = ask([WEATHER, ADD]), ask([WEATHER, ADD]), ask([WEATHER])
    assert [r.headers["x-cachegate-cache"] for r in (first, again, other)] == ["miss", "hit-exact", "miss"]
    calls = [[(c.function.name, c.function.arguments) for c in r.parse().choices[0].message.tool_calls]
             for r in (first, again)]
    assert calls[0] == calls[1] and again.parse().choices[0].finish_reason == "tool_calls"
