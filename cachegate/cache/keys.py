"""The exact-cache key: a hash over everything that changes the answer.

Tenant, endpoint, resolved model, every message (system included) with its role, tools and the
resolved sampling parameters, `seed` included. `stream` and `user` are left out: they never change the
text; so is `max_tokens`, which only cuts it (a stored answer serves any `max_tokens` it fits).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

from cachegate.backends.base import BackendRequest

KEY_VERSION = 2


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
    params = asdict(request.params)
    params["stop"] = sorted(params["stop"])
    del params["max_tokens"]
    return params


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
