"""Hermes-style tool calling without the model: tool_choice validation, prompts and tool turns rendered
for templates with and without a tool section, and the streaming parser, which yields the same calls
and content whatever the text's chunking.
"""
from __future__ import annotations

import json

import pytest

from cachegate.backends.base import merge_tool_calls
from engine.errors import RequestValidationError
from engine.tools import ToolCallParser, parse_tool_choice, render_tool_messages, tool_guide
from engine.tools.format import call_text

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                            "parameters": {"type": "object", "properties": {
                                                "city": {"type": "string"}}, "required": ["city"]}}}
ADD = {"type": "function", "function": {"name": "add", "parameters": {
    "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}}
TEXT = ('Let me check. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris {1}"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": {"x": [3]}}}\n</tool_call>')


def parse(pieces: list[str]) -> tuple[str, list[dict]]:
    parser, content, calls = ToolCallParser(), "", []
    for piece in pieces:
        text, deltas = parser.feed(piece)
        content += text
        merge_tool_calls(calls, deltas)
    text, deltas = parser.finish()
    return content + text, merge_tool_calls(calls, deltas)


@pytest.mark.parametrize("size", [1, 2, 3, 7, len(TEXT)])
def test_parser_gives_the_same_calls_whatever_the_chunking(size):
    content, calls = parse([TEXT[i:i + size] for i in range(0, len(TEXT), size)])
    assert content == "Let me check. "
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("get_weather", {"city": "Paris {1}"}), ("add", {"a": 2, "b": {"x": [3]}})]
    assert all(c["id"].startswith("call_") and c["type"] == "function" for c in calls)
    assert calls[0]["id"] != calls[1]["id"]


def test_parser_streams_arguments_before_the_call_ends():
    parser = ToolCallParser()
    _, head = parser.feed('<tool_call>\n{"name": "add", "arguments": {"a": 1, "b"')
    assert head[0]["function"] == {"name": "add", "arguments": ""} and head[0]["id"]
    assert "".join(d["function"].get("arguments", "") for d in head) == '{"a": 1, "b"'


def test_text_without_calls_passes_through_and_a_partial_tag_is_released_at_the_end():
    assert parse(["Hello <tool", "_ca"]) == ("Hello <tool_ca", [])
    assert parse(["plain answer"]) == ("plain answer", [])


def test_tool_choice_modes_and_their_errors():
    assert parse_tool_choice(None) is None
    assert parse_tool_choice([WEATHER]).mode == "auto"
    named = parse_tool_choice([WEATHER, ADD], {"type": "function", "function": {"name": "add"}}, False)
    assert (named.mode, named.name, named.parallel, [f["name"] for f in named.allowed]) == \
        ("named", "add", False, ["add"])
    assert tool_guide(parse_tool_choice([WEATHER], "none")) is None
    for tools, choice, words in [
            (None, "required", "only allowed when"), ([WEATHER], "sometimes", "must be one of"),
            ([WEATHER], {"type": "function", "function": {"name": "nope"}}, "not among the tools"),
            ([{"type": "retrieval"}], None, "must be"), ([WEATHER, WEATHER], None, "unique"),
            ([{"type": "function", "function": {"name": "f", "parameters": {"type": 3}}}], None, "invalid")]:
        with pytest.raises(RequestValidationError, match=words):
            parse_tool_choice(tools, choice)


def test_required_and_auto_compile_to_structural_tags():
    required = json.loads(tool_guide(parse_tool_choice([WEATHER, ADD], "required", False)).source)["format"]
    assert (required["type"], required["at_least_one"], required["stop_after_first"]) == \
        ("tags_with_separator", True, True)
    assert [t["begin"] for t in required["tags"]] == ['<tool_call>\n{"name": "get_weather", "arguments": ',
                                                      '<tool_call>\n{"name": "add", "arguments": ']
    auto = json.loads(tool_guide(parse_tool_choice([WEATHER], "auto")).source)["format"]
    assert (auto["type"], auto["triggers"], auto["at_least_one"]) == ("triggered_tags", ["<tool_call>"], False)


def test_tools_and_tool_turns_render_as_text_for_a_template_without_a_tool_section():
    history = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "c1", "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
               {"role": "tool", "tool_call_id": "c1", "content": "21 C"},
               {"role": "tool", "tool_call_id": "c2", "content": "sunny"}]
    messages, tools = render_tool_messages(history, parse_tool_choice([WEATHER]), "{{ messages }}")
    assert tools is None and [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[0]["content"].startswith("Be brief.") and '"name": "get_weather"' in messages[0]["content"]
    assert messages[2]["content"] == call_text("get_weather", {"city": "Paris"})
    assert messages[3]["content"] == "<tool_response>\n21 C\n</tool_response>\n<tool_response>\nsunny\n</tool_response>"


def test_a_template_with_a_tool_section_gets_tools_and_parsed_arguments():
    history = [{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "add", "arguments": '{"a": 1}'}}]}]
    messages, tools = render_tool_messages(history, parse_tool_choice([ADD]), "... <tool_call> ...")
    assert tools == [{"type": "function", "function": {"name": "add", "parameters": ADD["function"]["parameters"]}}]
    assert messages[0]["tool_calls"][0]["function"]["arguments"] == {"a": 1}
