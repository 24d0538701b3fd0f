"""Size limits a request must respect before any work is done: message count, prompt characters,
and the largest `max_tokens` it may ask for. Each breach is a 400 naming the parameter. Also the
token estimate a rate limit reserves for a request before it is answered."""
from __future__ import annotations

from cachegate.api.schema import ChatCompletionRequest, SamplingFields
from cachegate.errors import InvalidRequest
from cachegate.settings import LimitSettings


def check_limits(body: SamplingFields, limits: LimitSettings) -> None:
    if isinstance(body, ChatCompletionRequest):
        if len(body.messages) > limits.max_messages:
            raise InvalidRequest(f"Too many messages: {len(body.messages)} > {limits.max_messages}",
                                 param="messages", code="too_many_messages")
        chars = sum(len(m.text()) for m in body.messages)
        param = "messages"
    else:
        chars, param = len(body.prompt), "prompt"    # type: ignore[attr-defined]
    if chars > limits.max_prompt_chars:
        raise InvalidRequest(f"The prompt is too long: {chars} characters > {limits.max_prompt_chars}",
                             param=param, code="prompt_too_long")
    asked = body.requested_max_tokens       # type: ignore[attr-defined]
    if asked is not None and asked > limits.max_tokens:
        which = "max_completion_tokens" if getattr(body, "max_completion_tokens", None) else "max_tokens"
        raise InvalidRequest(f"{which} is too large: {asked} > {limits.max_tokens}", param=which,
                             code="max_tokens_too_large")


CHARS_PER_TOKEN = 4
DEFAULT_COMPLETION_TOKENS = 256     # reserved when the request names no max_tokens (the models' default)


def token_estimate(body: SamplingFields) -> tuple[int, int]:
    """(prompt tokens, completion tokens) a request may spend: characters / 4, and its `max_tokens`."""
    if isinstance(body, ChatCompletionRequest):
        chars = sum(len(m.text()) for m in body.messages)
    else:
        chars = len(body.prompt)    # type: ignore[attr-defined]
    return chars // CHARS_PER_TOKEN + 1, body.requested_max_tokens or DEFAULT_COMPLETION_TOKENS   # type: ignore[attr-defined]
