"""Errors the engine raises to its callers.

Validation errors subclass `ValueError` so a gateway can map them to a 400 without knowing the engine.
"""
from __future__ import annotations


class EngineError(Exception):
    """Base of every engine error."""


class RequestValidationError(EngineError, ValueError):
    """The request can never run as asked; raised before any work is done."""


class EmptyPromptError(RequestValidationError):
    pass


class ContextLengthError(RequestValidationError):
    def __init__(self, prompt_tokens: int, max_tokens: int, max_context: int) -> None:
        super().__init__(
            f"prompt ({prompt_tokens} tokens) + max_tokens ({max_tokens}) = {prompt_tokens + max_tokens} "
            f"exceeds the model's context of {max_context} tokens"
        )
        self.prompt_tokens, self.max_tokens, self.max_context = prompt_tokens, max_tokens, max_context


class InvalidTokenError(RequestValidationError):
    pass


class ChatTemplateError(RequestValidationError):
    """Raised by a chat template's `raise_exception(...)` or when the model has no template."""


class ModelNotFoundError(EngineError, FileNotFoundError):
    pass


class UnsupportedModelError(EngineError, NotImplementedError):
    pass


class EngineShutdownError(EngineError, RuntimeError):
    pass


class EngineOverloadedError(EngineError):
    """The waiting queue is full: the request is refused at once instead of waiting ever longer."""

    def __init__(self, waiting: int, limit: int, retry_after_s: float = 1.0) -> None:
        super().__init__(f"the engine has {waiting} requests waiting (limit {limit}); retry shortly")
        self.waiting, self.limit, self.retry_after_s = waiting, limit, retry_after_s
