"""Tools and tool turns in the prompt. A chat template with its own Hermes tool section (it writes
`<tool_call>`) gets the tools and messages as they are; any other template (SmolLM2's, the base-model
fallback) gets plain messages: the tool list and the call format in the system message, assistant
calls as `<tool_call>` text, and tool results as a user turn of `<tool_response>` blocks.
"""
from __future__ import annotations

import json
from typing import Any

from engine.tools.choice import ToolChoice
from engine.tools.format import CALL_OPEN, call_prefix, call_text, parse_arguments, response_text

TOOLS_INTRO = (
    "# Tools\n\n"
    "You may call one or more functions to help with the user's request. "
    "The functions you can call are listed inside <tools></tools>, one JSON signature a line:\n<tools>\n"
)
TOOLS_OUTRO = (
    "\n</tools>\n\n"
    "To call a function, write a JSON object with its name and arguments between "
    "<tool_call></tool_call> tags, one per call:\n"
    "<tool_call>\n{\"name\": <function name>, \"arguments\": <arguments as a JSON object>}\n</tool_call>"
)


def template_has_tools(template: str | None) -> bool:
    return bool(template) and CALL_OPEN in template


def render_tool_messages(messages: list[dict[str, Any]], choice: ToolChoice | None,
                         template: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """(messages, tools) to hand the chat template."""
    offered = list(choice.allowed) if choice is not None and choice.calls_possible else []
    if template_has_tools(template):
        tools = [{"type": "function", "function": fn} for fn in offered] or None
        return [with_parsed_arguments(m) for m in messages], tools
    plain = plain_messages(messages)
    if offered:
        plain = with_system_text(plain, tools_prompt(offered, choice))
    return plain, None


def tools_prompt(functions: list[dict[str, Any]], choice: ToolChoice) -> str:
    lines = "\n".join(json.dumps({"type": "function", "function": fn}, ensure_ascii=False) for fn in functions)
    text = TOOLS_INTRO + lines + TOOLS_OUTRO
    if choice.mode == "required":
        text += "\n\nAnswer with function calls only."
    elif choice.mode == "named":
        text += f"\n\nAnswer with one call of {choice.name}: {call_prefix(choice.name)}...}}"
    return text


def plain_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool turns as text any template renders; consecutive tool results share one user turn."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m.get("role")
        if role == "tool":
            block = response_text(str(m.get("content") or ""))
            if out and out[-1].get("tool_results"):
                out[-1]["content"] += "\n" + block
            else:
                out.append({"role": "user", "content": block, "tool_results": True})
        elif role == "assistant" and m.get("tool_calls"):
            calls = [call_text(c["function"]["name"], c["function"].get("arguments") or "{}")
                     for c in m["tool_calls"]]
            out.append({"role": "assistant", "content": "\n".join(filter(None, [m.get("content"), *calls]))})
        else:
            out.append({"role": role, "content": m.get("content") or ""})
    return [{k: v for k, v in m.items() if k != "tool_results"} for m in out]


def with_system_text(messages: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    if messages and messages[0]["role"] in ("system", "developer"):
        first = {"role": "system", "content": f"{messages[0]['content']}\n\n{text}".strip()}
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def with_parsed_arguments(message: dict[str, Any]) -> dict[str, Any]:
    """Templates with a tool section expect each call's arguments as an object, not a JSON string."""
    if not message.get("tool_calls"):
        return message
    calls = [{**c, "function": {**c["function"], "arguments": parse_arguments(c["function"].get("arguments")
                                                                            or "{}")}}
             for c in message["tool_calls"]]
    return {**message, "tool_calls": calls}
