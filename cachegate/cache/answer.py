"""A cached answer: what a tier stores and replays, independent of JSON or SSE shape."""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field

from cachegate.backends.base import Usage


@dataclass
class CachedAnswer:
    text: str
    finish_reason: str
    model: str
    usage: Usage
    created: float = field(default_factory=time.time)

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self), ensure_ascii=False).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> CachedAnswer:
        data = json.loads(raw)
        data["usage"] = Usage(**data["usage"])
        return cls(**data)
