"""`ToolCallParser`: the model's streamed text in, OpenAI's streamed pieces out: content deltas, and
tool-call deltas (`{"index", "id", "type", "function": {"name", "arguments"}}` when a call's name is
known, then `{"index", "function": {"arguments"}}` pieces) whose arguments join to the call's JSON.

Text that may still become `<tool_call>` is held back, and so is the tail of a call's arguments that
may be the closing `}` of the call object.
"""
from __future__ import annotations

import json
import re
import secrets
import string
from typing import Any

from engine.tools.format import CALL_CLOSE, CALL_OPEN

HEAD = re.compile(r'\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"arguments"\s*:\s*(?=\S)')
ID_ALPHABET = string.ascii_letters + string.digits


def new_call_id() -> str:
    return "call_" + "".join(secrets.choice(ID_ALPHABET) for _ in range(24))


class ToolCallParser:
    def __init__(self) -> None:
        self.buffer = ""            # text not yet released
        self.in_call = False
        self.head_done = False      # the current call's name went out
        self.args_sent = 0          # chars of the current call's arguments released
        self.calls: list[dict[str, Any]] = []   # whole calls so far (name, arguments)
        self.content_seen = False

    @property
    def num_calls(self) -> int:
        return len(self.calls)

    def feed(self, text: str) -> tuple[str, list[dict[str, Any]]]:
        """New text -> (content to show now, tool-call deltas)."""
        self.buffer += text
        content, deltas = "", []
        while True:
            if not self.in_call:
                piece, opened = self.scan_text()
                content += self.clean(piece)
                if not opened:
                    return content, deltas
            else:
                more, closed = self.scan_call()
                deltas += more
                if not closed:
                    return content, deltas

    def finish(self) -> tuple[str, list[dict[str, Any]]]:
        """The stream ended: release what was held back (an unfinished call's text goes out as it is)."""
        rest, self.buffer = self.buffer, ""
        if not self.in_call:
            return self.clean(rest), []
        if not self.head_done:
            return self.clean(CALL_OPEN + rest), []
        return "", self.argument_delta(rest[self.args_sent:])

    def scan_text(self) -> tuple[str, bool]:
        at = self.buffer.find(CALL_OPEN)
        if at >= 0:
            piece, self.buffer = self.buffer[:at], self.buffer[at + len(CALL_OPEN):]
            self.in_call, self.head_done, self.args_sent = True, False, 0
            return piece, True
        keep = held_back(self.buffer, CALL_OPEN)
        piece, self.buffer = self.buffer[:len(self.buffer) - keep], self.buffer[len(self.buffer) - keep:]
        return piece, False

    def scan_call(self) -> tuple[list[dict[str, Any]], bool]:
        deltas = []
        if not self.head_done:
            head = HEAD.match(self.buffer)
            if head is None:
                return [], False
            name = json.loads(f'"{head.group(1)}"')
            self.calls.append({"name": name, "arguments": ""})
            self.buffer, self.head_done = self.buffer[head.end():], True
            deltas.append({"index": len(self.calls) - 1, "id": new_call_id(), "type": "function",
                           "function": {"name": name, "arguments": ""}})
        end = self.buffer.find(CALL_CLOSE)
        if end < 0:
            cut = self.buffer.rfind("}")
            safe = self.buffer[:cut] if cut >= 0 else self.buffer
            deltas += self.argument_delta(safe[self.args_sent:])
            return deltas, False
        body = self.buffer[:end].rstrip()
        body = body[:-1].rstrip() if body.endswith("}") else body
        deltas += self.argument_delta(body[self.args_sent:])
        self.buffer, self.in_call = self.buffer[end + len(CALL_CLOSE):], False
        return deltas, True

    def argument_delta(self, piece: str) -> list[dict[str, Any]]:
        if not piece:
            return []
        self.args_sent += len(piece)
        self.calls[-1]["arguments"] += piece
        return [{"index": len(self.calls) - 1, "function": {"arguments": piece}}]

    def clean(self, content: str) -> str:
        """No leading blank before the first content, and none between or after calls."""
        if not self.content_seen:
            content = content.lstrip()
        if self.calls and not content.strip():
            return ""
        self.content_seen = self.content_seen or bool(content)
        return content


def held_back(text: str, marker: str) -> int:
    """Length of the longest tail of `text` that is a proper prefix of `marker`."""
    for n in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-n:]):
            return n
    return 0
