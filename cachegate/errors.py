"""OpenAI-shaped errors: `{"error": {"message", "type", "param", "code"}}` with the right HTTP status.

Every failure the gateway reports goes through `APIError`, so clients written for OpenAI can parse it.
"""
from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse


class APIError(Exception):
    status = 400
    type = "invalid_request_error"

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None,
                 status: int | None = None, type: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        if status is not None:
            self.status = status
        if type is not None:
            self.type = type

    def body(self) -> dict[str, Any]:
        return error_body(self.message, self.type, self.param, self.code)

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status)


class InvalidRequest(APIError):
    """400: the body is not valid JSON or does not follow the schema."""


class ModelNotFound(APIError):
    status = 404

    def __init__(self, model: str) -> None:
        super().__init__(f"The model '{model}' does not exist", param="model", code="model_not_found")


class ContextLengthExceeded(APIError):
    def __init__(self, message: str) -> None:
        super().__init__(message, param="messages", code="context_length_exceeded")


class BackendUnavailable(APIError):
    status = 503
    type = "server_error"


class BackendTimeout(APIError):
    status = 504
    type = "timeout_error"


def error_body(message: str, type: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}
