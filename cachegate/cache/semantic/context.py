"""What is embedded and what must match exactly: the last user turn, and the conversation before it.

`probe_of` returns the question text, the context text that is embedded with it, and a digest of every
earlier turn that is not embedded (it goes into the scope). With `history="exact"` (the default) no
earlier turn is embedded: the digest covers them all, so two conversations that differ anywhere never
share an entry. With `history="window"`, the last `context_turns` exchanges are embedded (compared by
similarity) and only the turns before them, and any text cut from the window, go into the digest.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from cachegate.backends.base import BackendRequest

CONTEXT_ROLES = ("user", "assistant")
HISTORY_MODES = ("exact", "window")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Probe:
    query: str
    context: str = ""   # embedded earlier turns (window mode); empty otherwise
    history: str = ""   # digest of the earlier turns that are not embedded ("" when there are none)

    @property
    def texts(self) -> list[str]:
        return [self.query, self.context] if self.context else [self.query]


def probe_of(request: BackendRequest, context_turns: int = 1, max_context_chars: int = 1500,
             history: str = "exact") -> Probe | None:
    """None for requests the tier leaves alone: tool calls and results, no final user question."""
    if request.prompt is not None:
        return Probe(request.prompt.strip()) if request.prompt.strip() else None
    messages = [m for m in request.messages or [] if m["role"] not in ("system", "developer")]
    if not messages or messages[-1]["role"] != "user" or any(_is_tool_traffic(m) for m in messages):
        return None
    query = request.question.strip()
    if not query:
        return None
    earlier = messages[:-1]
    if history == "exact":
        return Probe(query, "", history_digest(earlier))
    start = window_start(earlier, context_turns)
    window = context_text(earlier[start:], context_turns, max_chars=10 ** 9)
    if len(window) > max_context_chars:        # what the embedding cannot see must match exactly
        return Probe(query, window[:max_context_chars], history_digest(earlier))
    return Probe(query, window, history_digest(earlier[:start]))


def history_digest(messages: list[dict[str, Any]]) -> str:
    """A digest of the turns, equal for two histories only when every turn has the same role and the same
    text (whitespace aside)."""
    if not messages:
        return ""
    turns = [[m["role"], _SPACES.sub(" ", m["content"]).strip()] for m in messages]
    return hashlib.sha256(json.dumps(turns, ensure_ascii=False).encode()).hexdigest()[:32]


def window_start(earlier: list[dict[str, Any]], turns: int) -> int:
    """Index of the first message of the last `turns` exchanges (a user turn and what follows it)."""
    if turns <= 0:
        return len(earlier)
    users = 0
    for i in range(len(earlier) - 1, -1, -1):
        if earlier[i]["role"] == "user":
            users += 1
            if users == turns:
                return i
    return 0


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
