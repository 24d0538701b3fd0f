"""Routing: which tier answers a request. A plain-data view of the request in, a decision out.

`ComplexityRouter` scores what a request asks (length of prompt and answer, turns, code, math,
multi-step reasoning, explicit thoroughness, tools, a response schema) against weights and a threshold
from the config. Tools or a schema add to the score without deciding it: either tier serves them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

SMALL, LARGE = "small", "large"


@dataclass(frozen=True)
class RouteInput:
    """What routing may look at: no I/O, no HTTP."""
    kind: str                       # "chat" | "completions"
    text: str                       # the last user turn (chat) or the prompt (completions)
    prompt_tokens: int              # estimate of the whole prompt
    max_tokens: int | None = None   # requested answer length, if the client set one
    turns: int = 1                  # user turns in the conversation
    has_tools: bool = False         # tools offered: their schemas are in the prompt, calls must be well formed
    has_schema: bool = False        # response_format json_object / json_schema: the answer follows a grammar
    embedding: Any = None           # sentence embedding of `text`, for policies with `needs_embedding`


@dataclass(frozen=True)
class RouteDecision:
    tier: str
    score: float = 0.0
    reasons: tuple[str, ...] = ()


class Router(Protocol):
    needs_embedding: bool

    def route(self, request: RouteInput) -> RouteDecision: ...


CODE = re.compile(r"```|\bdef |\bclass |\bimport |#include|\bfunction\b|=>|\breturn\b|[{};]\s*$", re.MULTILINE)
MATH = re.compile(r"\b(prove|proof|derive|integral|derivative|equation|theorem|solve|probability|matrix)\b"
                  r"|\d+\s*[-+*/^=]\s*\d+|\\frac|∫|√", re.IGNORECASE)
REASONING = re.compile(r"\b(step[- ]by[- ]step|explain (exactly )?why|why does|compare|contrast|analy[sz]e"
                       r"|trade-?offs?|design|architect|plan|pros and cons|evaluate|reason|implications?|debug"
                       r"|refactor|rigorous(ly)?|critically|assess|argue|consequences|fix (it|this|the bug))\b",
                       re.IGNORECASE)
THOROUGH = re.compile(r"\b(in detail|detailed|thorough(ly)?|comprehensive|in depth|elaborate|essay"
                      r"|long-form|at length|exhaustive)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ComplexityWeights:
    per_1k_prompt_tokens: float = 1.0
    per_1k_answer_tokens: float = 2.0
    per_extra_turn: float = 0.15
    code: float = 0.6
    math: float = 1.0
    reasoning: float = 0.8
    thorough: float = 1.0
    tools: float = 0.5
    schema: float = 0.3


@dataclass(frozen=True)
class ComplexityRouter:
    """Score ≥ `threshold` → large. Short code completions always take the small, fast path."""
    threshold: float = 0.8
    weights: ComplexityWeights = field(default_factory=ComplexityWeights)
    completion_small_below_tokens: int = 200
    needs_embedding = False

    def route(self, request: RouteInput) -> RouteDecision:
        if request.kind == "completions" and request.prompt_tokens < self.completion_small_below_tokens \
                and (request.max_tokens or 0) <= self.completion_small_below_tokens:
            return RouteDecision(SMALL, 0.0, ("short completion",))
        score, reasons = self.score(request)
        return RouteDecision(LARGE if score >= self.threshold else SMALL, score, tuple(reasons))

    def score(self, request: RouteInput) -> tuple[float, list[str]]:
        w = self.weights
        parts = {
            "prompt length": w.per_1k_prompt_tokens * request.prompt_tokens / 1000,
            "answer length": w.per_1k_answer_tokens * (request.max_tokens or 0) / 1000,
            "turns": w.per_extra_turn * max(0, request.turns - 1),
            "code": w.code * cues(CODE, request.text),
            "math": w.math * cues(MATH, request.text),
            "reasoning": w.reasoning * cues(REASONING, request.text),
            "thoroughness": w.thorough * cues(THOROUGH, request.text),
            "tools": w.tools * request.has_tools,
            "schema": w.schema * request.has_schema,
        }
        reasons = [name for name, value in parts.items() if value >= 0.1]
        return sum(parts.values()), reasons


def cues(pattern: re.Pattern[str], text: str, cap: int = 2) -> int:
    """How many different cues of one kind the text shows, capped: a second cue adds, a tenth does not."""
    return min(cap, len({m.group(0).lower() for m in pattern.finditer(text)}))


@dataclass(frozen=True)
class FixedRouter:
    """Everything to one tier: for single-model set-ups and for tests."""
    tier: str = SMALL
    needs_embedding = False

    def route(self, request: RouteInput) -> RouteDecision:
        return RouteDecision(self.tier, 0.0, ("fixed",))
