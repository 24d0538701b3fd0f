"""The exact-cache key: a hash over everything that changes the answer.

Tenant, endpoint, resolved model, every message (system included) with its role, tools and the
resolved sampling parameters, `seed` included. `stream` and `user` are left out: they never change the
text; so is `max_tokens`, which only cuts it (a stored answer serves any `max_tokens` it fits).
"""
from __future__ import annotations

import hashlib
from dataclasses import fields
from typing import Any

import orjson

from cachegate.backends.base import BackendRequest, Sampling

KEY_VERSION = 2
ANSWER_PARAMS = tuple(f.name for f in fields(Sampling) if f.name != "max_tokens")   # every other field


def exact_key(endpoint: str, request: BackendRequest) -> str:
    params = answer_params(request)
    material = {
        "v": KEY_VERSION,
        "endpoint": endpoint,
        "tenant": request.tenant,
        "model": request.model,
        "messages": request.messages,
        "prompt": request.prompt,
        "tools": request.tools,
        "params": params,
        "extra": request.extra,
    }
    return hashlib.sha256(canonical_json(material)).hexdigest()


def answer_params(request: BackendRequest) -> dict[str, Any]:
    """The sampling parameters that change an answer's text (all but `max_tokens`), stops sorted."""
    params = {name: getattr(request.params, name) for name in ANSWER_PARAMS}
    params["stop"] = sorted(params["stop"])
    return params


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8: the same value always gives the same bytes."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
