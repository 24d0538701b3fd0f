"""`GuideSpec`: what a request's output must look like, as plain data the engine compiles and caches.

Three kinds: `json_schema` (a JSON Schema, as text), `json_object` (any JSON object) and
`structural_tag` (xgrammar's structural-tag JSON: free text and tagged tool calls, see engine.tools).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

KINDS = ("json_schema", "json_object", "structural_tag")


@dataclass(frozen=True)
class GuideSpec:
    kind: str
    source: str = ""          # the schema or structural tag as JSON text (key order kept: it is the output's)

    def __post_init__(self) -> None:
        assert self.kind in KINDS, f"unknown guide kind {self.kind!r}"

    @classmethod
    def json_schema(cls, schema: dict[str, Any] | bool) -> GuideSpec:
        return cls("json_schema", json.dumps(schema))

    @classmethod
    def json_object(cls) -> GuideSpec:
        return cls("json_object")

    @classmethod
    def structural_tag(cls, tag: dict[str, Any]) -> GuideSpec:
        return cls("structural_tag", json.dumps(tag))
