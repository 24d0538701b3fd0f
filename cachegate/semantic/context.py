"""What is embedded: the last user turn, plus the earlier turns that make it unambiguous.

`probe_of` returns the question text and a context text (the previous `context_turns` user turns and
answers, most recent first), or None when the request is not a question the semantic tier can serve.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cachegate.backends.base import BackendRequest

CONTEXT_ROLES = ("user", "assistant")


@dataclass(frozen=True)
class Probe:
    query: str
    context: str = ""   # empty: the question opens the conversation

    @property
    def texts(self) -> list[str]:
        return [self.query, self.context] if self.context else [self.query]


def probe_of(request: BackendRequest, context_turns: int = 1, max_context_chars: int = 1500) -> Probe | None:
    """None for requests the tier leaves alone: tool calls and results, no final user question."""
    if request.prompt is not None:
        return Probe(request.prompt.strip()) if request.prompt.strip() else None
    messages = [m for m in request.messages or [] if m["role"] not in ("system", "developer")]
    if not messages or messages[-1]["role"] != "user" or any(_is_tool_traffic(m) for m in messages):
        return None
    query = messages[-1]["content"].strip()
    if not query:
        return None
    return Probe(query, context_text(messages[:-1], context_turns, max_context_chars))


def context_text(earlier: list[dict[str, Any]], turns: int, max_chars: int) -> str:
    """The last `turns` user turns with their answers, newest first, so truncation drops the oldest."""
    if turns <= 0 or not earlier:
        return ""
    kept: list[str] = []
    users = 0
    for message in reversed(earlier):
        if message["role"] == "user":
            users += 1
        if users > turns:
            break
        kept.append(f"{message['role']}: {message['content'].strip()}")
    text = "\n".join(_newest_first_pairs(kept))
    return text[:max_chars]


def _newest_first_pairs(reversed_lines: list[str]) -> list[str]:
    """Lines arrive newest first; keep each user turn before its answer within an exchange."""
    out: list[str] = []
    exchange: list[str] = []
    for line in reversed_lines:
        exchange.insert(0, line)
        if line.startswith("user: "):
            out.extend(exchange)
            exchange = []
    return out + exchange


def _is_tool_traffic(message: dict[str, Any]) -> bool:
    return message["role"] in ("tool", "function") or bool(message.get("tool_calls"))
