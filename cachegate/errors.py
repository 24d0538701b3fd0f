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

    headers: dict[str, str] = {}

    def response(self, request_id: str | None = None) -> JSONResponse:
        headers = self.headers | ({"x-request-id": request_id} if request_id else {})
        return JSONResponse(self.body(), status_code=self.status, headers=headers or None)

    def public(self, request_id: str) -> APIError:
        """What a client may see of this error (all of it, unless a subclass says otherwise)."""
        return self


class InvalidRequest(APIError):
    """400: the body is not valid JSON or does not follow the schema."""


class ModelNotFound(APIError):
    status = 404

    def __init__(self, model: str) -> None:
        super().__init__(f"The model '{model}' does not exist", param="model", code="model_not_found")


class ContextLengthExceeded(APIError):
    def __init__(self, message: str) -> None:
        super().__init__(message, param="messages", code="context_length_exceeded")


class Unauthorized(APIError):
    status = 401

    def __init__(self, message: str = "Incorrect API key provided. Send it as 'Authorization: Bearer <key>'.") -> None:
        super().__init__(message, code="invalid_api_key")


class RateLimited(APIError):
    """429 for a client over its own limits, with `retry-after` in whole seconds."""
    status = 429
    type = "rate_limit_error"

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message, code="rate_limit_exceeded")
        self.headers = {"retry-after": str(max(1, int(retry_after_s + 0.999)))}


class BackendError(APIError):
    """A backend failed. `retryable` failures (connection, timeout, 429, 5xx) may go to another try,
    replica or tier; the others (the backend refused the request itself) go back to the client."""
    status = 503
    type = "server_error"
    retryable = True
    state = "is unavailable"        # what `public` tells the client, for a 503

    def __init__(self, message: str, *, retry_after_s: float | None = None, **kw) -> None:
        super().__init__(message, **kw)
        self.retry_after_s = retry_after_s
        if retry_after_s is not None:
            self.headers = {"retry-after": str(max(1, int(retry_after_s + 0.999)))}


    def public(self, request_id: str) -> APIError:
        """A backend's verdict on the request itself (a 4xx) goes back as it is; a failure of the backend
        gets a generic message with the request id, since its text names internal hosts and errors
        (the details go to the log under the same id)."""
        if not self.retryable:
            return self
        what = {429: "is rate limited by its provider", 504: "did not answer in time"}.get(self.status, self.state)
        error = APIError(f"The model's backend {what}; retry shortly (request id {request_id})",
                         status=self.status, type=self.type, code="backend_unavailable")
        error.headers = self.headers
        return error


class BackendUnavailable(BackendError):
    """503: unreachable, broken, or its circuit is open."""


class BackendOverloaded(BackendUnavailable):
    """503 with `retry-after`: the backend's queue is full; refused at once rather than queued."""
    state = "is busy"


class BackendTimeout(BackendError):
    status = 504
    type = "timeout_error"


class BackendRateLimited(BackendError):
    status = 429
    type = "rate_limit_error"


class BackendRejected(BackendError):
    """The backend answered 4xx to the request itself: passed through, never retried."""
    retryable = False


def server_error(request_id: str) -> APIError:
    """500 for anything unexpected, with nothing of the exception but the request id."""
    return APIError(f"The server had an error while processing your request (request id {request_id})",
                    status=500, type="server_error", code="internal_error")


def error_body(message: str, type: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}
