"""Checks a JSON Schema before it is compiled: valid against its metaschema, and free of the keywords
the grammar cannot enforce (so "the answer validates" stays true): not, if/then/else, oneOf,
dependentRequired/dependentSchemas, uniqueItems, and allOf of more than one schema.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema

from engine.guided.errors import GrammarError

UNENFORCED = ("not", "if", "then", "else", "oneOf", "dependentRequired", "dependentSchemas")
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
SCHEMA_VALUES = ("additionalProperties", "items", "contains", "propertyNames", "not", "if", "then", "else",
                 "unevaluatedProperties", "unevaluatedItems")


class SchemaError(GrammarError):
    pass


def check_schema(source: str) -> None:
    try:
        schema = json.loads(source)
    except json.JSONDecodeError as exc:
        raise SchemaError(f"the schema is not JSON: {exc}") from None
    if not isinstance(schema, (dict, bool)):
        raise SchemaError("the schema must be a JSON object")
    try:
        jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "the root"
        raise SchemaError(f"the schema is invalid at {where}: {exc.message}") from None
    for path, node in subschemas(schema, "#"):
        refuse_unenforced(path, node)


def refuse_unenforced(path: str, node: dict[str, Any]) -> None:
    named = [k for k in UNENFORCED if k in node]
    if node.get("uniqueItems") is True:
        named.append("uniqueItems")
    if len(node.get("allOf") or []) > 1:
        named.append("allOf (of more than one schema)")
    if named:
        raise SchemaError(f"the schema uses {', '.join(named)} at {path}, which constrained decoding cannot "
                          f"enforce; rewrite it without (e.g. anyOf for oneOf)")


def subschemas(node: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object in `node`, with its JSON pointer."""
    if not isinstance(node, dict):
        return
    yield path, node
    for key in SCHEMA_MAPS:
        for name, child in (node.get(key) or {}).items() if isinstance(node.get(key), dict) else ():
            yield from subschemas(child, f"{path}/{key}/{name}")
    for key in SCHEMA_LISTS:
        for i, child in enumerate(node.get(key) or []) if isinstance(node.get(key), list) else ():
            yield from subschemas(child, f"{path}/{key}/{i}")
    for key in SCHEMA_VALUES:
        yield from subschemas(node.get(key), f"{path}/{key}")
