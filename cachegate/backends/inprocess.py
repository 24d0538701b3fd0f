"""The in-process backend: the gateway's own engine, loaded into this process from a model spec.

Turns a `BackendRequest` into prompt token ids (the model's chat template or plain text), fits
`max_tokens` to the context, and streams the engine's outputs as `Chunk`s. A base model without a
chat template of its own answers chat requests through the engine's fallback transcript, whose stop
string is added here. Tools, tool_choice and response_format become a grammar the engine follows and
tool calls parsed out of its text (see `structured`). `engine_stats()` merges the engine's KV,
prefix-reuse and latency figures.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator
from typing import Any

from cachegate.backends.base import BackendRequest, Chunk, ModelInfo, Sampling, Usage
from cachegate.backends.structured import AnswerShaper, Structure, chat_inputs, structure_of
from cachegate.errors import BackendOverloaded, BackendUnavailable, ContextLengthExceeded, InvalidRequest
from cachegate.settings import ModelSettings
from engine.errors import EngineOverloadedError
from engine.guided.errors import GrammarError
from engine.sampling_params import SamplingParams

log = logging.getLogger(__name__)


class InProcessBackend:
    def __init__(self, model: ModelSettings, engine: Any = None) -> None:
        self.settings = model
        self.engine = engine
        self.info = ModelInfo(model.name, model.tier, model.max_context or 0, model.default_max_tokens)

    async def start(self) -> None:
        if self.engine is None:
            self.engine = await asyncio.to_thread(load_engine, self.settings)
        limit = self.engine.max_context
        self.info.max_context = min(self.settings.max_context or limit, limit)

    async def close(self) -> None:
        if self.engine is not None:
            await self.engine.shutdown()

    def engine_stats(self) -> dict[str, Any]:
        """Running and waiting requests, and whatever else the engine reports (KV blocks, prefix reuse)."""
        if self.engine is None:
            return {}
        extra = self.engine.stats() if hasattr(self.engine, "stats") else {}
        return {"running": self.engine.num_running, "waiting": self.engine.num_waiting} | extra

    async def generate(self, request: BackendRequest) -> AsyncIterator[Chunk]:
        structure = structure_of(request)
        prompt_ids = self.prompt_ids(request, structure)
        params = self.with_chat_stop(request, self.fit_to_context(request, len(prompt_ids)))
        # the fallback transcript ends in "Answer:", so a base model's answer starts with a space
        leading = request.messages is not None and bool(getattr(self.engine.tokenizer, "chat_stop", None))
        shaper = AnswerShaper(structure)
        guided = {"guide": structure.guide} if structure.guide is not None else {}
        try:
            async for out in self.engine.generate(prompt_ids, engine_params(params), request_id=request.request_id,
                                                  tenant=request.tenant, priority=request.priority, **guided):
                usage = None
                if out.finish_reason:
                    reused = out.metrics.cached_tokens if out.metrics else 0
                    usage = Usage(out.prompt_tokens, out.completion_tokens, reused)
                text = out.text
                if leading:
                    text = text.lstrip()
                    leading = not text
                text, calls, reason = shaper.shape(text, out.finish_reason)
                yield Chunk(text, reason, usage, tool_calls=calls)
        except EngineOverloadedError as exc:
            raise BackendOverloaded(f"{self.info.name}: {exc}", retry_after_s=exc.retry_after_s) from exc
        except GrammarError as exc:
            raise InvalidRequest(str(exc), param=structure.param) from exc
        except ValueError as exc:
            raise InvalidRequest(str(exc)) from exc
        except (RuntimeError, MemoryError) as exc:
            log.exception("engine %s failed", self.info.name)
            raise BackendUnavailable(f"the engine of '{self.info.name}' failed: {exc}") from exc

    def prompt_ids(self, request: BackendRequest, structure: Structure | None = None) -> list[int]:
        tokenizer = self.engine.tokenizer
        if request.prompt is not None:
            return tokenizer.encode(request.prompt)
        messages, tools = chat_inputs(request, structure or Structure(),
                                      getattr(tokenizer, "chat_template", None))
        try:
            return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tools=tools)
        except Exception as exc:  # the model's own template rejects the conversation (e.g. role order)
            raise InvalidRequest(f"The conversation does not fit the model's chat template: {exc}",
                                 param="messages") from exc

    def with_chat_stop(self, request: BackendRequest, params):
        """Chat on a base model: end the answer where the fallback transcript's next question starts."""
        extra = getattr(self.engine.tokenizer, "chat_stop", None) if request.messages is not None else None
        if not extra:
            return params
        return type(params)(**{**params.__dict__, "stop": list(dict.fromkeys([*params.stop, *extra]))})

    def fit_to_context(self, request: BackendRequest, prompt_len: int):
        params = request.params
        limit = self.info.max_context
        room = limit - prompt_len
        if room < 1:
            raise ContextLengthExceeded(
                f"This model's maximum context length is {limit} tokens. However, your messages resulted "
                f"in {prompt_len} tokens. Please reduce the length of the messages.")
        if params.max_tokens > room:
            if request.max_tokens_explicit:
                raise ContextLengthExceeded(
                    f"This model's maximum context length is {limit} tokens. However, you requested "
                    f"{prompt_len + params.max_tokens} tokens ({prompt_len} in the messages, "
                    f"{params.max_tokens} in the completion). Please reduce the length of the messages "
                    f"or completion.")
            params = type(params)(**{**params.__dict__, "max_tokens": room})
        return params


def load_engine(model: ModelSettings) -> Any:
    import torch

    from engine.async_engine import AsyncEngine
    device = model.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    log.info("loading %s from %s on %s", model.name, model.path, device)
    return AsyncEngine.from_pretrained(model.path, device=device, dtype=model.dtype,
                                       share_prefix_across_tenants=model.share_prefix_across_tenants,
                                       max_waiting=model.max_waiting)


def engine_params(params: Sampling) -> SamplingParams:
    """The gateway's sampling settings in the engine's own type."""
    return SamplingParams(**dataclasses.asdict(params))
