"""The answer log's gate: which finished answers are kept for distillation. Only fresh answers of the
logged tiers (large by default) that ended by themselves: never a cache hit, an error, a cut answer, a
fallback, tools or a response format, a `no-store` request, an excluded tenant or namespace. It never
fails a request.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from cachegate.backends.base import BackendRequest
from cachegate.cache.answer import CachedAnswer
from cachegate.cache.controls import CacheControls
from cachegate.distill.entry import AnswerEntry
from cachegate.routing.router import Route
from cachegate.settings import DistillSettings

log = logging.getLogger(__name__)


@dataclass
class LogCounts:
    logged: int = 0
    skipped: int = 0        # not admitted (wrong tier, cut, excluded...) or over the size bound
    errors: int = 0         # the sink failed: logged, counted, the request still served


class AnswerLog:
    def __init__(self, sink, cfg: DistillSettings) -> None:
        self.sink, self.cfg = sink, cfg
        self.counts = LogCounts()

    def admits(self, request: BackendRequest, route: Route, controls: CacheControls,
               answer: CachedAnswer) -> bool:
        cfg = self.cfg
        return (route.tier in cfg.tiers and not route.fell_back and not controls.no_store
                and not request.tools and not request.extra.get("response_format")
                and answer.finish_reason == "stop" and not answer.tool_calls and bool(answer.text.strip())
                and (not cfg.tenants or request.tenant in cfg.tenants)
                and request.tenant not in cfg.exclude_tenants and controls.namespace not in cfg.exclude_namespaces)

    async def offer(self, request: BackendRequest, route: Route, controls: CacheControls,
                    answer: CachedAnswer) -> bool:
        """Log the answer if it is admitted; True when it was written. Never raises."""
        try:
            if self.admits(request, route, controls, answer) and await self.sink.append(
                    entry_of(request, controls, answer)):
                self.counts.logged += 1
                return True
            self.counts.skipped += 1
        except Exception:
            log.exception("the distillation log could not take an answer; it is served all the same")
            self.counts.errors += 1
        return False

    async def close(self) -> None:
        await self.sink.close()


def entry_of(request: BackendRequest, controls: CacheControls, answer: CachedAnswer) -> AnswerEntry:
    return AnswerEntry(tenant=request.tenant, namespace=controls.namespace, model=answer.model,
                       answer=answer.text.strip(), messages=request.messages, prompt=request.prompt,
                       prompt_tokens=answer.usage.prompt_tokens, completion_tokens=answer.usage.completion_tokens,
                       temperature=request.params.temperature,
                       max_tokens=request.params.max_tokens if request.max_tokens_explicit else None)


def build_answer_log(cfg: DistillSettings, redis_url: str | None, key_prefix: str,
                     socket_timeout_s: float, client=None) -> AnswerLog | None:
    """The log the settings ask for, or None (`distill.log: none`, the default). `client`: the gateway's one
    Redis client (its owner closes it), else the log opens its own."""
    if cfg.log == "none":
        return None
    if cfg.log == "file":
        from cachegate.distill.sinks import FileSink
        return AnswerLog(FileSink(cfg.log_path, cfg.max_entries, cfg.max_bytes), cfg)
    if not redis_url:
        raise ValueError("distill.log 'redis' needs redis.url")
    from cachegate.distill.sinks import RedisSink
    from cachegate.stores.redis import connect
    sink = RedisSink(client or connect(redis_url, socket_timeout_s), key_prefix, cfg.max_entries, cfg.max_bytes,
                     owns_client=client is None)
    return AnswerLog(sink, cfg)
