"""Verified labels: a question, the cached question whose answer it was served, and whether that was
right (a shadow re-ask, a client's feedback). Kept bounded and tenant-scoped, in memory and, when a
file is configured, appended as JSON lines for `cachegate train matcher --from-verified`."""
from __future__ import annotations

import json
import logging
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Label:
    tenant: str
    namespace: str
    question: str
    entry_question: str
    good: bool
    source: str                  # "shadow" | "feedback"
    at: float = field(default_factory=time.time)


class VerifiedLabels:
    def __init__(self, max_labels: int = 10_000, path: str | None = None) -> None:
        self.max_labels = max_labels
        self.labels: deque[Label] = deque(maxlen=max_labels)
        self.path = Path(path) if path else None
        self.written = 0

    def add(self, label: Label) -> None:
        self.labels.append(label)
        if self.path is not None:
            self._append(label)

    def for_tenant(self, tenant: str) -> list[Label]:
        return [label for label in self.labels if label.tenant == tenant]

    def _append(self, label: Label) -> None:
        """Append to the file; past twice the bound, rewrite it with the newest `max_labels` (bounded)."""
        try:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(asdict(label), ensure_ascii=False) + "\n")
            self.written += 1
            if self.written >= 2 * self.max_labels:
                lines = self.path.read_text(encoding="utf-8").splitlines()[-self.max_labels:]
                self.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
                self.written = len(lines)
        except OSError as exc:
            log.warning("could not write a verified label to %s: %s", self.path, exc)


def read_labels(path: str) -> list[Label]:
    """The labels a file holds (for training), skipping lines that do not parse."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            out.append(Label(**json.loads(line)))
        except (ValueError, TypeError):
            continue
    return out
