"""`AnswerEntry`: one logged request and the large model's answer to it, as one JSON line.

The same shape in the file log, in Redis and in the held-out files `cachegate distill` writes; `sinks.read_entries`
reads any of them back (a JSONL file, a log folder, a redis:// URL), skipping lines that do not parse.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

VERSION = 1


@dataclass
class AnswerEntry:
    tenant: str
    namespace: str
    model: str                                  # the large model that answered
    answer: str
    messages: list[dict[str, Any]] | None = None   # chat requests
    prompt: str | None = None                    # completion requests
    prompt_tokens: int = 0
    completion_tokens: int = 0
    temperature: float = 1.0
    max_tokens: int | None = None                # as the client sent it (None: the model's default)
    ts: float = field(default_factory=time.time)
    v: int = VERSION

    def to_line(self) -> str:
        return json.dumps({k: v for k, v in asdict(self).items() if v is not None}, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnswerEntry:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        entry = cls(**known)
        if not isinstance(entry.answer, str) or (entry.messages is None) == (entry.prompt is None):
            raise ValueError("an entry has an answer and either messages or a prompt")
        return entry

    @property
    def request_key(self) -> str:
        """Same request, same key: used to split train / held-out and to drop repeats."""
        body = json.dumps([self.tenant, self.messages, self.prompt], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(body.encode()).hexdigest()

    @property
    def question(self) -> str:
        if self.prompt is not None:
            return self.prompt
        users = [m.get("content") or "" for m in self.messages or [] if m.get("role") == "user"]
        return users[-1] if users else ""


def parse_line(line: str) -> AnswerEntry | None:
    try:
        return AnswerEntry.from_dict(json.loads(line))
    except (ValueError, TypeError):
        return None


def read_lines(lines: Iterator[str]) -> Iterator[AnswerEntry]:
    for line in lines:
        if line.strip() and (entry := parse_line(line)) is not None:
            yield entry


def write_entries(path: Path, entries: list[AnswerEntry]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(e.to_line() + "\n" for e in entries), encoding="utf-8")
