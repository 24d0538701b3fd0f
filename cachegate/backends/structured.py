"""What a chat request asks of the shape of its answer, for the in-process engine: its tools and
tool_choice (a `ToolChoice`), the grammar the output follows (a `GuideSpec` from response_format or the
tools), the messages as the chat template gets them, and the shaping of the engine's text back into
content and OpenAI tool-call deltas. Anything it cannot honour is a 400 naming the parameter.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cachegate.backends.base import BackendRequest
from cachegate.errors import InvalidRequest
from engine.errors import RequestValidationError
from engine.guided.response_format import guide_for_response_format
from engine.guided.spec import GuideSpec
from engine.tools import ToolCallParser, ToolChoice, parse_tool_choice, render_tool_messages, tool_guide
from engine.tools.choice import ToolError


@dataclass
class Structure:
    choice: ToolChoice | None = None
    guide: GuideSpec | None = None

    @property
    def param(self) -> str:
        """The request field a grammar error is about."""
        return "tools" if self.guide is not None and self.guide.kind == "structural_tag" else "response_format"

    @property
    def parses_calls(self) -> bool:
        return self.choice is not None and self.choice.calls_possible


def structure_of(request: BackendRequest) -> Structure:
    if request.messages is None:
        return Structure()
    extra = request.extra
    try:
        choice = parse_tool_choice(request.tools, extra.get("tool_choice"), extra.get("parallel_tool_calls"))
    except ToolError as exc:
        raise InvalidRequest(str(exc), param=exc.param) from None
    try:
        answer_format = guide_for_response_format(extra.get("response_format"))
    except RequestValidationError as exc:
        raise InvalidRequest(str(exc), param="response_format") from None
    calls = tool_guide(choice) if choice is not None else None
    if calls is not None and answer_format is not None:
        raise InvalidRequest("This engine cannot follow a response_format while it may call tools; send "
                             "tool_choice 'none' or leave response_format out", param="response_format",
                             code="unsupported_parameter")
    guide = calls or answer_format
    if guide is not None and request.params.stop:
        raise InvalidRequest("'stop' cannot be combined with a response_format or tools on this engine: a stop "
                             "string could cut the JSON or a tool call the grammar keeps whole", param="stop",
                             code="unsupported_parameter")
    return Structure(choice, guide)


def chat_inputs(request: BackendRequest, structure: Structure,
                template: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """(messages, tools) for the chat template: tool turns and tools rendered when there are any."""
    messages = request.messages or []
    has_tool_turns = any(m.get("role") == "tool" or m.get("tool_calls") for m in messages)
    if structure.choice is None and not has_tool_turns:
        return messages, request.tools
    return render_tool_messages(messages, structure.choice, template)


@dataclass
class AnswerShaper:
    """Engine text in, (content, tool-call deltas, finish reason) out; a plain pass-through without tools."""
    structure: Structure
    parser: ToolCallParser | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if self.structure.parses_calls:
            self.parser = ToolCallParser()

    def shape(self, text: str, finish_reason: str | None) -> tuple[str, list[dict[str, Any]] | None, str | None]:
        if self.parser is None:
            return text, None, finish_reason
        content, calls = self.parser.feed(text)
        if finish_reason is not None:
            more_content, more_calls = self.parser.finish()
            content, calls = content + more_content, calls + more_calls
            if finish_reason == "stop" and self.parser.num_calls:
                finish_reason = "tool_calls"
        return content, calls or None, finish_reason
