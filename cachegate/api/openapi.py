"""The OpenAPI description of the public API: request bodies (the routes read raw bodies to give
OpenAI-shaped errors, so their schemas are attached here), response bodies and every error status.
Clients can generate code from it, and the fuzz test (schemathesis) holds the gateway to it."""
from __future__ import annotations

from typing import Any, Literal

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import BaseModel

from cachegate.api.schema import CacheFeedback, ChatCompletionRequest, CompletionRequest

REF = "#/components/schemas/{model}"


class PromptTokensDetails(BaseModel):
    cached_tokens: int


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: PromptTokensDetails | None = None


class FunctionCall(BaseModel):
    name: str
    arguments: str          # JSON text, as OpenAI sends it


class ToolCall(BaseModel):
    id: str
    type: Literal["function"]
    function: FunctionCall


class ChatMessageOut(BaseModel):
    role: Literal["assistant"]
    content: str | None                  # None when the answer is only tool calls
    tool_calls: list[ToolCall] | None = None


class ChatChoice(BaseModel):
    index: int
    message: ChatMessageOut
    logprobs: None = None
    finish_reason: str | None


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    system_fingerprint: str
    choices: list[ChatChoice]
    usage: Usage


class TextChoice(BaseModel):
    index: int
    text: str
    logprobs: None = None
    finish_reason: str | None


class TextCompletion(BaseModel):
    id: str
    object: Literal["text_completion"]
    created: int
    model: str
    system_fingerprint: str
    choices: list[TextChoice]
    usage: Usage


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None
    code: str | None


class ErrorResponse(BaseModel):
    error: ErrorDetail


class ModelCard(BaseModel):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str
    tier: str
    max_context: int


ModelObject = ModelCard


class ModelList(BaseModel):
    object: Literal["list"]
    data: list[ModelCard]


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    models: list[str]
    stores: dict[str, Literal["up", "down"]]


ERRORS = {status: {"model": ErrorResponse, "description": text} for status, text in {
    400: "bad input (malformed JSON, wrong type, out of range, too long)", 401: "missing or invalid API key",
    404: "unknown model", 408: "the body did not arrive in time", 413: "body too large",
    415: "the body is not JSON (Content-Type)", 429: "rate limit of the key",
    500: "unexpected error (generic, with the request id)", 503: "no backend could answer, or overloaded",
    504: "the backend timed out"}.items()}


class FeedbackResult(BaseModel):
    id: str
    tier: Literal["exact", "curated", "semantic"]
    good: bool
    invalidated: list[str]


def body_route(request: type[BaseModel], response: dict[str, Any]) -> dict[str, Any]:
    """Description of a route that reads its JSON body itself: the body's schema, its 200 and its errors."""
    return {"request": request, "openapi_extra": {"requestBody": {"required": True, "content": {
        "application/json": {"schema": {"$ref": REF.format(model=request.__name__)}}}}},
        "responses": {200: response} | ERRORS}


def completion_route(request: type[BaseModel], response: type[BaseModel]) -> dict[str, Any]:
    return body_route(request, {"model": response, "description": "the answer; an SSE stream when `stream` is true",
                                "content": {"text/event-stream": {"schema": {"type": "string"}}}})


CHAT_ROUTE = completion_route(ChatCompletionRequest, ChatCompletion)
COMPLETIONS_ROUTE = completion_route(CompletionRequest, TextCompletion)
FEEDBACK_ROUTE = body_route(CacheFeedback, {"model": FeedbackResult, "description": "the verdict, recorded"})


def install(app: FastAPI, described: dict[str, tuple[Any, dict[str, Any]]]) -> None:
    """Make `app.openapi()` describe the routes in `described` (path -> endpoint, decorator arguments:
    routes served without FastAPI's machinery) and include the request schemas they reference."""
    docs = [APIRoute(path, endpoint, methods=["POST"], **{k: v for k, v in arguments.items() if k != "request"})
            for path, (endpoint, arguments) in described.items()]
    bodies = [arguments["request"] for _, arguments in described.values()]

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, routes=docs + app.routes,
                                 description=__doc__.split("\n")[0])
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            for model in bodies:
                body = model.model_json_schema(ref_template=REF, mode="validation")
                components.update(body.pop("$defs", {}))
                components[model.__name__] = body
            app.openapi_schema = schema
        return app.openapi_schema
    app.openapi = openapi
