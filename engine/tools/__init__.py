"""Tool calling on models without a native tool format: OpenAI `tools` rendered into the prompt in the
Hermes style (`<tool_call>{"name", "arguments"}</tool_call>`), the grammar that keeps calls well formed
(`tool_choice`, `parallel_tool_calls`), and the streaming parser that turns the text back into calls.
"""
from engine.tools.choice import ToolChoice, parse_tool_choice
from engine.tools.grammar import tool_guide
from engine.tools.parser import ToolCallParser
from engine.tools.render import render_tool_messages

__all__ = ["ToolCallParser", "ToolChoice", "parse_tool_choice", "render_tool_messages", "tool_guide"]
