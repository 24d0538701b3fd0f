"""The fixed prompts of `cachegate bench structured`: questions with a JSON Schema to answer in, and
questions with tools to call. Each schema is also written into the prompt, so the runs with and without
constraints see the same text and differ only in the grammar.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SchemaCase:
    question: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class ToolCase:
    question: str
    tools: list[dict[str, Any]] = field(default_factory=list)


def obj(required: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": required, "required": list(required), **extra}


STRING, INTEGER, NUMBER, BOOLEAN = ({"type": t} for t in ("string", "integer", "number", "boolean"))
SCHEMA_CASES = [
    SchemaCase("Describe Paris: its name, its country and its population in millions.",
               obj({"city": STRING, "country": STRING, "population_millions": NUMBER})),
    SchemaCase("Invent a person called Ann who is 31 and lives in Oslo.",
               obj({"name": STRING, "age": INTEGER, "city": STRING})),
    SchemaCase("Classify the sentiment of: 'I love this book, it arrived early!'",
               obj({"sentiment": {"type": "string", "enum": ["positive", "negative", "neutral"]},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1}})),
    SchemaCase("List three primary colors.",
               obj({"colors": {"type": "array", "items": STRING, "minItems": 3, "maxItems": 3}})),
    SchemaCase("Extract the order: 'Please send 2 copies of Dune to 5 Elm Street.'",
               obj({"title": STRING, "quantity": INTEGER, "address": STRING})),
    SchemaCase("Is water wet? Answer and explain briefly.",
               obj({"answer": BOOLEAN, "reason": {"type": "string", "maxLength": 80}})),
    SchemaCase("Give a recipe name with its ingredients and minutes to cook.",
               obj({"recipe": STRING, "ingredients": {"type": "array", "items": STRING}, "minutes": INTEGER})),
    SchemaCase("Describe a book: title, author, year, and whether it is fiction.",
               obj({"title": STRING, "author": STRING, "year": INTEGER, "fiction": BOOLEAN})),
]


def function(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": obj(properties, additionalProperties=False)}}


WEATHER = function("get_weather", "Current weather in a city",
                   {"city": STRING, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}})
ADD = function("add", "Add two numbers", {"a": NUMBER, "b": NUMBER})
SEARCH = function("search_books", "Search the shop's books", {"query": STRING, "max_results": INTEGER})
ORDER = function("order_status", "The status of an order", {"order_id": STRING})
TOOL_SET = [WEATHER, ADD, SEARCH, ORDER]
TOOL_CASES = [ToolCase(q, TOOL_SET) for q in (
    "What is the weather in Paris in celsius?", "What is 17 plus 25?", "Find me books about dragons.",
    "Where is my order A-1234?", "Is it raining in Oslo? Use fahrenheit.", "Add 2.5 and 4.",
)]
