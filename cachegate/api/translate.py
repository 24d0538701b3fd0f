"""OpenAI request bodies → `BackendRequest`: parse, validate, resolve defaults.

Bad input raises `InvalidRequest` naming the parameter, in OpenAI's words where it has them.
"""
from __future__ import annotations

import uuid
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from cachegate.api.schema import ChatCompletionRequest, CompletionRequest, SamplingFields
from cachegate.backends.base import BackendRequest, Sampling
from cachegate.errors import InvalidRequest
from cachegate.json_depth import depth

MAX_BODY_DEPTH = 64     # nesting a request body may have (tool schemas are deep, but not this deep)
ENDPOINT_SCHEMAS: dict[str, type[SamplingFields]] = {
    "chat": ChatCompletionRequest,
    "completions": CompletionRequest,
}


def parse_body(raw: bytes, schema: type[BaseModel]) -> Any:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise too_deep() from None
        raise InvalidRequest(f"We could not parse the JSON body of your request: {exc}") from None
    if depth(data, MAX_BODY_DEPTH) > MAX_BODY_DEPTH:
        raise too_deep()
    if not isinstance(data, dict):
        raise InvalidRequest("The request body must be a JSON object")
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from None


def too_deep() -> InvalidRequest:
    return InvalidRequest(f"The JSON body of your request nests deeper than {MAX_BODY_DEPTH} levels",
                          code="too_deeply_nested")


_TYPE_SEGMENTS = {"str", "int", "float", "bool", "dict", "list", "none", "literal"}


def validation_error(exc: ValidationError) -> InvalidRequest:
    """The most telling of pydantic's errors (our own checks first), with its location as `param`."""
    errors = exc.errors()
    first = next((e for e in errors if e["type"] == "value_error"), errors[0])
    param = ".".join(str(part) for part in first["loc"] if _is_field(part)) or None
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
        message = f"Missing required parameter: '{param}'"
    elif param:
        message = f"Invalid value for '{param}': {message}"
    return InvalidRequest(message, param=param, code="invalid_value" if first["type"] != "missing"
                          else "missing_required_parameter")


def _is_field(part: str | int) -> bool:
    return isinstance(part, int) or (part.isidentifier() and part not in _TYPE_SEGMENTS)


def to_backend_request(body: SamplingFields, tenant: str = "default", request_id: str = "") -> BackendRequest:
    """The request as the client asked it: `model` is still the client's field (auto, a tier, a model)
    and `max_tokens`, when the client gave none, the routed model's default once the gateway routes it."""
    requested = body.requested_max_tokens  # type: ignore[attr-defined]
    params = Sampling(
        max_tokens=requested or Sampling.max_tokens,
        temperature=1.0 if body.temperature is None else body.temperature,
        top_p=1.0 if body.top_p is None else body.top_p,
        top_k=body.top_k or 0,
        seed=body.seed,
        stop=list(body.stop or []),
    )
    common = dict(model=body.model, params=params, tenant=tenant, max_tokens_explicit=requested is not None,
                  request_id=request_id or uuid.uuid4().hex, user=body.user)
    if isinstance(body, ChatCompletionRequest):
        return BackendRequest(messages=[m.canonical() for m in body.messages], tools=body.tools,
                              extra=_chat_extra(body), **common)
    assert isinstance(body, CompletionRequest)
    return BackendRequest(prompt=body.prompt, **common)


def _chat_extra(body: ChatCompletionRequest) -> dict[str, Any]:
    """Answer-changing chat fields the engine does not read itself but the cache key must cover."""
    fields = (("tool_choice", body.tool_choice), ("response_format", body.response_format),
              ("parallel_tool_calls", body.parallel_tool_calls))
    return {k: v for k, v in fields if v is not None}
