"""The grammar of a tool-calling answer, as an xgrammar structural tag: each call is
`<tool_call>\\n{"name": "<one of the tools>", "arguments": <that tool's parameters schema>}\\n</tool_call>`.

auto: free text in which any call that starts is well formed; required: calls only, at least one;
named: exactly one call of that function. Without parallel_tool_calls an answer holds one call at most.
"""
from __future__ import annotations

import json
from typing import Any

from engine.guided.errors import first_line
from engine.guided.spec import GuideSpec
from engine.tools.choice import ToolChoice, ToolError
from engine.tools.format import CALL_CLOSE, CALL_OPEN, call_prefix

CALL_SEPARATOR = "\n"


def tool_guide(choice: ToolChoice) -> GuideSpec | None:
    """None when no call can be made (tool_choice none)."""
    if not choice.calls_possible:
        return None
    tags = [call_tag(fn) for fn in choice.allowed]
    single = choice.mode == "named" or not choice.parallel
    if choice.mode == "auto":
        fmt = {"type": "triggered_tags", "triggers": [CALL_OPEN], "tags": tags,
               "at_least_one": False, "stop_after_first": single}
    else:
        fmt = {"type": "tags_with_separator", "tags": tags, "separator": CALL_SEPARATOR,
               "at_least_one": True, "stop_after_first": single}
    return GuideSpec.structural_tag({"type": "structural_tag", "format": fmt})


def call_tag(fn: dict[str, Any]) -> dict[str, Any]:
    """The call's JSON up to its arguments is fixed text; the arguments follow the tool's schema, written
    compactly (`{"a": 1, "b": 2}`, as the prompt shows calls)."""
    return {"type": "tag", "begin": call_prefix(fn["name"]),
            "content": {"type": "grammar", "grammar": arguments_grammar(fn["parameters"])},
            "end": "}\n" + CALL_CLOSE}


def arguments_grammar(schema: dict[str, Any]) -> str:
    """EBNF of the schema's JSON without free whitespace (xgrammar's own conversion)."""
    import xgrammar as xgr
    try:
        return str(xgr.Grammar.from_json_schema(json.dumps(schema), any_whitespace=False, strict_mode=True))
    except RuntimeError as exc:
        raise ToolError(f"a tool's parameters cannot be compiled: {first_line(exc)}") from None
