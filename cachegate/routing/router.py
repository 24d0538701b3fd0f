"""Where a request goes: the client's `model` field resolved to a configured model and its fallbacks.

`auto` asks the routing policy for a tier; a tier name (`small`, `large`) or a model name pins it.
The chain lists the models to try in order; the fallback table (large → small) extends it.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from cachegate.backends.base import BackendRequest
from cachegate.errors import ModelNotFound
from cachegate.settings import Settings
from policies.routing import RouteDecision, RouteInput, Router

AUTO = "auto"


@dataclass
class Route:
    model: str                          # the model that should answer
    tier: str
    chain: list[str]                    # models to try, `model` first
    decision: RouteDecision | None = None   # set when the policy chose (model "auto")
    answered_by: str | None = None      # set once a model of the chain has answered

    @property
    def fell_back(self) -> bool:
        return self.answered_by is not None and self.answered_by != self.model

    def header(self) -> str:
        served = self.answered_by or self.model
        text = f"{self.tier}:{served}"
        if self.decision is not None:
            text = f"auto:{text}"
        if self.fell_back:
            text += f";fallback-from={self.model}"
        return text


@dataclass
class ModelRouter:
    tiers: dict[str, list[str]]                 # tier -> model names, in config order
    policy: Router
    fallback: dict[str, list[str]] = field(default_factory=dict)
    fallback_pinned: bool = True
    embed: Callable[[list[str]], Awaitable[Any]] | None = None   # for policies that read embeddings

    @classmethod
    def from_settings(cls, settings: Settings, policy: Router,
                      embed: Callable[[list[str]], Awaitable[Any]] | None = None) -> ModelRouter:
        """The configured models by tier, with `policy` (built from `routing` by `cachegate.build_parts`)."""
        tiers: dict[str, list[str]] = {}
        for model in settings.models:
            tiers.setdefault(model.tier, []).append(model.name)
        return cls(tiers, policy, settings.routing.fallback, settings.routing.fallback_pinned, embed)

    def tier_of(self, model: str) -> str | None:
        return next((tier for tier, names in self.tiers.items() if model in names), None)

    async def resolve(self, endpoint: str, request: BackendRequest) -> Route:
        """The route of a request by the `model` it names; the request is described for the policy
        (`route_input`) only when the policy decides (`model: auto`)."""
        requested = request.model
        if requested == AUTO:
            described = route_input(endpoint, request)
            if self.policy.needs_embedding:
                assert self.embed is not None, "this routing policy needs an embedder"
                described = dataclasses.replace(described, embedding=(await self.embed([described.text]))[0])
            decision = self.policy.route(described)
            tier = decision.tier if decision.tier in self.tiers else self._nearest(decision.tier)
            return self._route(self.tiers[tier][0], tier, decision, pinned=False)
        if requested in self.tiers:
            return self._route(self.tiers[requested][0], requested, None, pinned=False)
        tier = self.tier_of(requested)
        if tier is None:
            raise ModelNotFound(requested)
        return self._route(requested, tier, None, pinned=True)

    def _route(self, model: str, tier: str, decision: RouteDecision | None, pinned: bool) -> Route:
        chain = [model] + [m for m in self.tiers[tier] if m != model]
        if self.fallback_pinned or not pinned:
            for other in self.fallback.get(tier, []):
                chain += [m for m in self.tiers.get(other, []) if m not in chain]
        return Route(model, tier, chain, decision)

    def _nearest(self, tier: str) -> str:
        """A tier the policy chose but nobody configured: its fallbacks, else the first tier."""
        for other in self.fallback.get(tier, []):
            if other in self.tiers:
                return other
        return next(iter(self.tiers))


def route_input(endpoint: str, request: BackendRequest) -> RouteInput:
    """The plain-data view of a request the routing policy reads (tokens estimated at 4 characters)."""
    explicit = request.params.max_tokens if request.max_tokens_explicit else None
    if request.messages is None:
        prompt = request.prompt or ""
        return RouteInput(kind=endpoint, text=prompt, prompt_tokens=len(prompt) // 4, max_tokens=explicit)
    turns = sum(m["role"] == "user" for m in request.messages)
    chars = sum(len(m.get("content") or "") for m in request.messages)
    chars += len(json.dumps(request.tools)) if request.tools else 0     # rendered into the prompt
    answer_format = request.extra.get("response_format")
    has_schema = isinstance(answer_format, dict) and answer_format.get("type") in ("json_object", "json_schema")
    return RouteInput(kind=endpoint, text=request.question, prompt_tokens=chars // 4,
                      max_tokens=explicit, turns=turns, has_tools=bool(request.tools), has_schema=has_schema)
