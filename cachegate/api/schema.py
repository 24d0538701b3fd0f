"""The OpenAI request schema the gateway accepts, validated with pydantic.

Unknown fields are accepted and ignored (drop-in clients send newer ones), known fields are checked
for type and range so a bad request gets a 400 that names the offending parameter.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None

    @model_validator(mode="after")
    def only_text(self) -> ContentPart:
        if self.type != "text" or self.text is None:
            raise ValueError(f"content parts of type '{self.type}' are not supported; send text parts")
        return self


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Role
    content: str | list[ContentPart] | None = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None

    @model_validator(mode="after")
    def has_content(self) -> Message:
        if self.content is None and not (self.role == "assistant" and self.tool_calls):
            raise ValueError(f"a '{self.role}' message needs 'content'")
        return self

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text or "" for part in self.content)

    def canonical(self) -> dict[str, Any]:
        """The fields that change the answer, with content parts flattened to one string."""
        out: dict[str, Any] = {"role": self.role, "content": self.text()}
        for key in ("name", "tool_calls", "tool_call_id"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class CacheField(BaseModel):
    """The body field `cache`, as LiteLLM accepts it: {"no-cache", "no-store", "ttl", "s-maxage", "namespace"}."""
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    no_cache: bool = Field(False, alias="no-cache")
    no_store: bool = Field(False, alias="no-store")
    ttl_s: float | None = Field(None, alias="ttl", gt=0)
    max_age_s: float | None = Field(None, alias="s-maxage", ge=0)
    namespace: str | None = Field(None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._-]+$")


class SamplingFields(BaseModel):
    """Parameters shared by chat and text completions."""
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1)
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    top_k: int | None = Field(None, ge=-1)
    n: int = Field(1, ge=1, le=1, description="only one choice per request is served")
    stop: str | list[str] | None = None
    seed: int | None = None
    presence_penalty: float = Field(0.0, ge=-2, le=2)
    frequency_penalty: float = Field(0.0, ge=-2, le=2)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = None
    cache: CacheField | None = None

    @field_validator("stop")
    @classmethod
    def stop_list(cls, stop: str | list[str] | None) -> list[str] | None:
        if stop is None:
            return None
        stops = [stop] if isinstance(stop, str) else stop
        if len(stops) > 4:
            raise ValueError("at most 4 stop sequences are allowed")
        if any(not s for s in stops):
            raise ValueError("stop sequences must not be empty")
        return stops

    @field_validator("presence_penalty", "frequency_penalty")
    @classmethod
    def penalties_supported(cls, value: float) -> float:
        if value:
            raise ValueError("penalties other than 0 are not supported by this gateway's engines")
        return value

    @property
    def include_usage(self) -> bool:
        return bool(self.stream and self.stream_options and self.stream_options.include_usage)


class ChatCompletionRequest(SamplingFields):
    messages: list[Message] = Field(min_length=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    response_format: dict[str, Any] | None = None
    logprobs: bool | None = None

    @field_validator("logprobs")
    @classmethod
    def no_logprobs(cls, value: bool | None) -> bool | None:
        if value:
            raise ValueError("logprobs are not supported")
        return value

    @property
    def requested_max_tokens(self) -> int | None:
        return self.max_completion_tokens or self.max_tokens


class CompletionRequest(SamplingFields):
    prompt: str | list[str]
    max_tokens: int | None = Field(16, ge=1)
    echo: bool = False
    suffix: str | None = None
    logprobs: int | None = None

    @field_validator("prompt")
    @classmethod
    def one_prompt(cls, prompt: str | list[str]) -> str:
        if isinstance(prompt, list):
            if len(prompt) != 1:
                raise ValueError("exactly one prompt per request is served; send a string")
            prompt = prompt[0]
        if not prompt:
            raise ValueError("prompt must not be empty")
        return prompt

    @field_validator("echo", "suffix", "logprobs")
    @classmethod
    def unsupported(cls, value: Any) -> Any:
        if value:
            raise ValueError("this parameter is not supported")
        return value

    @property
    def requested_max_tokens(self) -> int | None:
        return self.max_tokens


class CacheFeedback(BaseModel):
    """`POST /v1/cache/feedback`: a client's verdict on an answer it was served from the cache."""
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=128, description="the `id` of a response the gateway served")
    good: bool
