"""OpenAI's `response_format` as a `GuideSpec`: `text` (none), `json_object` (any JSON object) or
`json_schema` (`{"json_schema": {"name", "schema", "strict"}}`: the answer follows the schema).
"""
from __future__ import annotations

from typing import Any

from engine.errors import RequestValidationError
from engine.guided.spec import GuideSpec


class ResponseFormatError(RequestValidationError):
    pass


def guide_for_response_format(response_format: Any) -> GuideSpec | None:
    if response_format is None:
        return None
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return GuideSpec.json_object()
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        if not isinstance(spec, dict) or "schema" not in spec:
            raise ResponseFormatError("response_format json_schema needs {'json_schema': {'name': ..., "
                                      "'schema': {...}}}")
        if not isinstance(spec["schema"], (dict, bool)):
            raise ResponseFormatError("response_format.json_schema.schema must be a JSON Schema object")
        return GuideSpec.json_schema(spec["schema"])
    raise ResponseFormatError(f"response_format type {kind!r} is not supported: use text, json_object or "
                              f"json_schema")
