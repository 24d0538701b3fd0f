"""The Hermes-style text of tool calls and results, in one place: what the prompt shows, what the
grammar enforces and what the parser reads all come from these strings.
"""
from __future__ import annotations

import json
from typing import Any

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<tool_response>", "</tool_response>"


def call_prefix(name: str) -> str:
    """A call's text before its arguments: `<tool_call>\\n{"name": "NAME", "arguments": `."""
    return f'{CALL_OPEN}\n{{"name": {json.dumps(name)}, "arguments": '


def call_text(name: str, arguments: Any) -> str:
    """A whole call, as the model writes it (arguments: a JSON string or already parsed)."""
    if isinstance(arguments, str):
        arguments = parse_arguments(arguments)
    return f"{call_prefix(name)}{json.dumps(arguments, ensure_ascii=False)}}}\n{CALL_CLOSE}"


def response_text(content: str) -> str:
    return f"{RESPONSE_OPEN}\n{content}\n{RESPONSE_CLOSE}"


def parse_arguments(text: str) -> Any:
    """OpenAI sends arguments as a JSON string; a string that is not JSON is kept as it is."""
    try:
        return json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return text
