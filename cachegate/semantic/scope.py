"""The scope of a semantic entry: what must be identical for one answer to serve another question.

Tenant, namespace, endpoint, model, system prompt, tools and every output-changing parameter, hashed;
a lookup only ever searches its own scope, so tenants, prompts and models never cross.
"""
from __future__ import annotations

import hashlib
from dataclasses import asdict

from cachegate.backends.base import BackendRequest
from cachegate.cache.keys import canonical_json

SCOPE_VERSION = 1


def scope_of(endpoint: str, request: BackendRequest, namespace: str) -> str:
    params = asdict(request.params)
    params["stop"] = sorted(params["stop"])
    system = [m for m in request.messages or [] if m["role"] in ("system", "developer")]
    material = {
        "v": SCOPE_VERSION,
        "tenant": request.tenant,
        "namespace": namespace,
        "endpoint": endpoint,
        "model": request.model,
        "system": system,
        "tools": request.tools,
        "params": params,
        "extra": request.extra,
    }
    return hashlib.sha256(canonical_json(material)).hexdigest()[:32]
