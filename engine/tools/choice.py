"""`ToolChoice`: a request's tools and what it asks of them, validated: `auto`, `none`, `required` or one
named function, and whether several calls may come in one answer (`parallel_tool_calls`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine.errors import RequestValidationError
from engine.guided.errors import GrammarError
from engine.guided.schema_check import check_schema

MODES = ("auto", "none", "required")


class ToolError(GrammarError):
    def __init__(self, message: str, param: str = "tools") -> None:
        super().__init__(message)
        self.param = param


@dataclass(frozen=True)
class ToolChoice:
    functions: tuple[dict[str, Any], ...]   # each {"name", "description"?, "parameters"}
    mode: str = "auto"                      # auto | none | required | named
    name: str | None = None                 # the function a named choice forces
    parallel: bool = True

    @property
    def calls_possible(self) -> bool:
        return bool(self.functions) and self.mode != "none"

    @property
    def allowed(self) -> tuple[dict[str, Any], ...]:
        return tuple(f for f in self.functions if self.mode != "named" or f["name"] == self.name)


def parse_tool_choice(tools: list[dict[str, Any]] | None, tool_choice: Any = None,
                      parallel_tool_calls: Any = None) -> ToolChoice | None:
    """None when the request has neither tools nor a tool choice; `ToolError` for what cannot be served."""
    if not tools:
        if tool_choice not in (None, "none"):
            raise ToolError("'tool_choice' is only allowed when 'tools' are specified", "tool_choice")
        return None
    functions = tuple(function_of(tool, i) for i, tool in enumerate(tools))
    names = [f["name"] for f in functions]
    if len(set(names)) != len(names):
        raise ToolError("tool names must be unique")
    mode, name = choice_mode(tool_choice if tool_choice is not None else "auto", names)
    return ToolChoice(functions, mode, name, parallel_tool_calls is not False)


def function_of(tool: Any, index: int) -> dict[str, Any]:
    if not isinstance(tool, dict) or tool.get("type", "function") != "function" or \
            not isinstance(tool.get("function"), dict):
        raise ToolError(f"tools[{index}] must be {{'type': 'function', 'function': {{...}}}}")
    fn = tool["function"]
    name = fn.get("name")
    if not isinstance(name, str) or not name or len(name) > 64 or \
            not all(c.isalnum() or c in "_-" for c in name):
        raise ToolError(f"tools[{index}].function.name must be 1-64 letters, digits, '_' or '-'")
    parameters = fn.get("parameters") or {"type": "object", "properties": {}}
    try:
        check_schema(json.dumps(parameters))
    except RequestValidationError as exc:
        raise ToolError(f"tools[{index}].function.parameters: {exc}") from None
    out = {"name": name, "parameters": parameters}
    if fn.get("description"):
        out["description"] = str(fn["description"])
    return out


def choice_mode(choice: Any, names: list[str]) -> tuple[str, str | None]:
    if isinstance(choice, str):
        if choice not in MODES:
            raise ToolError(f"'tool_choice' must be one of {', '.join(MODES)} or a named function",
                            "tool_choice")
        return choice, None
    name = (choice.get("function") or {}).get("name") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or choice.get("type") != "function" or not isinstance(name, str):
        raise ToolError("a named 'tool_choice' is {'type': 'function', 'function': {'name': ...}}",
                        "tool_choice")
    if name not in names:
        raise ToolError(f"'tool_choice' names the function '{name}', which is not among the tools",
                        "tool_choice")
    return "named", name
