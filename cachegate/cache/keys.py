"""The exact-cache key: a hash over everything that changes the answer.

Tenant, endpoint, resolved model, every message (system included) with its role, tools and the
resolved sampling parameters. `stream` and `user` are left out: they never change the text.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

from cachegate.backends.base import BackendRequest

KEY_VERSION = 1


def exact_key(endpoint: str, request: BackendRequest) -> str:
    params = asdict(request.params)
    params["stop"] = sorted(params["stop"])
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


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
