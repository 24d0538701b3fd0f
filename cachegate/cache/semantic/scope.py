"""The scope of a semantic entry: what must be identical for one answer to serve another question.

Tenant, namespace, endpoint, model, system prompt, tools, every parameter that changes the text
(`max_tokens` only cuts it) and the digest of the conversation's turns that are not embedded, hashed;
a lookup only ever searches its own scope, so tenants, prompts, models and conversations never cross.
"""
from __future__ import annotations

import hashlib

from cachegate.backends.base import BackendRequest
from cachegate.cache.keys import answer_params, canonical_json

SCOPE_VERSION = 2


def scope_of(endpoint: str, request: BackendRequest, namespace: str, history: str = "") -> str:
    system = [m for m in request.messages or [] if m["role"] in ("system", "developer")]
    material = {
        "v": SCOPE_VERSION,
        "tenant": request.tenant,
        "namespace": namespace,
        "endpoint": endpoint,
        "model": request.model,
        "system": system,
        "tools": request.tools,
        "params": answer_params(request),
        "extra": request.extra,
        "history": history,
    }
    return hashlib.sha256(canonical_json(material)).hexdigest()[:32]
