"""A stand-in backend for testing the gateway's own logic: deterministic answers, countable calls.

Never the only test of a path: the end-to-end tests run the real engine.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from cachegate.backends.base import BackendRequest, Chunk, ModelInfo, Usage
from cachegate.errors import BackendUnavailable, ContextLengthExceeded


class EchoBackend:
    """Answers "echo: <last user text>" word by word; can be told to fail before or during a stream."""

    def __init__(self, name: str = "echo", tier: str = "small", max_context: int = 512,
                 delay_s: float = 0.0) -> None:
        self.info = ModelInfo(name, tier, max_context, default_max_tokens=64)
        self.delay_s = delay_s
        self.calls = 0
        self.fail_before = False
        self.fail_after_chunks: int | None = None
        self.finish_reason = "stop"

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    def answer_for(self, request: BackendRequest) -> str:
        text = request.prompt if request.prompt is not None else request.messages[-1]["content"]
        return f"echo: {text}"

    async def generate(self, request: BackendRequest) -> AsyncIterator[Chunk]:
        self.calls += 1
        prompt_tokens = len(str(request.messages or request.prompt).split())
        if prompt_tokens >= self.info.max_context:
            raise ContextLengthExceeded(f"{prompt_tokens} tokens do not fit {self.info.max_context}")
        if self.fail_before:
            raise BackendUnavailable("backend down")
        every = self.answer_for(request).split(" ")
        words = every[: request.params.max_tokens]
        cut = len(words) < len(every)
        for i, word in enumerate(words):
            if self.fail_after_chunks is not None and i >= self.fail_after_chunks:
                raise BackendUnavailable("backend died mid-stream")
            await asyncio.sleep(self.delay_s)
            last = i == len(words) - 1
            yield Chunk(text=word if i == 0 else " " + word,
                        finish_reason=("length" if cut else self.finish_reason) if last else None,
                        usage=Usage(prompt_tokens, len(words)) if last else None)
