"""A semantic entry: the question, its context, their embeddings, the answer, and its lifetime.

Stored as JSON bytes (embeddings as base64 float16) through the same `Store` interface as the exact
tier. Ids are 62-bit hashes of scope, question and context, so two replicas storing one answer agree.
"""
from __future__ import annotations

import base64
import hashlib
import json
import time
from dataclasses import dataclass, field

import numpy as np

from cachegate.cache.answer import CachedAnswer, CorruptEntry, load_json, need, typed
from cachegate.cache.semantic.context import Probe

CONTEXT_WEIGHT = 0.5   # how much the earlier turns pull the index vector (exact signals decide hits)


def entry_id(scope: str, probe: Probe) -> int:
    digest = hashlib.sha256(f"{scope}\x00{probe.query}\x00{probe.context}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 2


def id_text(entry_id: int) -> str:
    return format(entry_id, "016x")


def parse_id(text: str) -> int:
    value = int(text, 16)
    if not 0 <= value < 1 << 62:
        raise ValueError("entry ids are 16 hex digits")
    return value


def index_vector(query: np.ndarray, context: np.ndarray | None) -> np.ndarray:
    v = query if context is None else query + CONTEXT_WEIGHT * context
    return (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)


@dataclass
class SemanticEntry:
    id: int
    scope: str
    namespace: str
    tenant: str
    query: str
    context: str
    query_vector: np.ndarray
    context_vector: np.ndarray | None
    answer: CachedAnswer
    expires_at: float                     # wall clock, seconds
    created: float = field(default_factory=time.time)
    hits: int = 0

    @property
    def vector(self) -> np.ndarray:
        return index_vector(self.query_vector, self.context_vector)

    def age(self, now: float | None = None) -> float:
        return (now or time.time()) - self.created

    def to_bytes(self) -> bytes:
        return json.dumps({
            "id": self.id, "scope": self.scope, "namespace": self.namespace, "tenant": self.tenant,
            "query": self.query, "context": self.context, "qv": _pack(self.query_vector),
            "cv": None if self.context_vector is None else _pack(self.context_vector),
            "answer": json.loads(self.answer.to_bytes()), "expires_at": self.expires_at,
            "created": self.created, "hits": self.hits,
        }, ensure_ascii=False).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> SemanticEntry:
        """Raises `CorruptEntry` for anything but a well-formed entry."""
        d = load_json(raw)
        need(isinstance(d, dict), "an entry is an object")
        text = {k: typed(d, k, str) for k in ("scope", "namespace", "tenant", "query", "context")}
        need(d.get("cv") is None or isinstance(d["cv"], str), "cv is packed text")
        try:
            query_vector = _unpack(typed(d, "qv", str))
            context_vector = None if d.get("cv") is None else _unpack(d["cv"])
        except ValueError as exc:
            raise CorruptEntry(f"malformed entry: vectors ({exc})") from None
        return cls(id=typed(d, "id", int), **text, query_vector=query_vector, context_vector=context_vector,
                   answer=CachedAnswer.from_dict(d.get("answer")),
                   expires_at=float(typed(d, "expires_at", (int, float))),
                   created=float(typed(d, "created", (int, float))), hits=int(d.get("hits", 0) or 0))

    def summary(self) -> dict:
        return {"id": id_text(self.id), "namespace": self.namespace, "query": self.query,
                "context": self.context, "model": self.answer.model, "created": self.created,
                "expires_at": self.expires_at, "hits": self.hits}


def _pack(v: np.ndarray) -> str:
    return base64.b64encode(np.asarray(v, dtype=np.float16).tobytes()).decode()


def _unpack(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=np.float16).astype(np.float32)
