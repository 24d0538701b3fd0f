"""`AsyncEngine`: the asyncio streaming API over `LLMEngine`.

Forward passes run in one background worker thread, never on the event loop. New requests and aborts
reach the worker through an inbox it drains before every step, so all requests run batched together.
A consumer that stops iterating (aclose, cancellation, a dropped stream) aborts its request: its KV
blocks are free before the next step. While idle the worker checks the block accounting.
"""
from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import torch

from engine.config import EngineConfig
from engine.errors import EngineOverloadedError, EngineShutdownError
from engine.guided.spec import GuideSpec
from engine.llm_engine import BatchFailed, LLMEngine
from engine.loader import DEFAULT_MODEL
from engine.outputs import RequestOutput
from engine.sampling_params import SamplingParams
from engine.sequence import Sequence
from engine.tokenizer import Tokenizer

log = logging.getLogger(__name__)
IDLE_POLL_S = 1.0


@dataclass
class Job:
    """A request and the way back to its consumer's event loop."""
    seq: Sequence
    loop: asyncio.AbstractEventLoop
    outputs: asyncio.Queue = field(default_factory=asyncio.Queue)
    abandoned: threading.Event = field(default_factory=threading.Event)

    def push(self, item: RequestOutput | BaseException) -> None:
        """Called from the worker thread."""
        try:
            self.loop.call_soon_threadsafe(self.outputs.put_nowait, item)
        except RuntimeError:  # the consumer's loop is closed: nobody is listening any more
            self.abandoned.set()


@dataclass
class EngineCounters:
    finished: int = 0
    abandoned: int = 0
    failed: int = 0


class AsyncEngine:
    def __init__(self, engine: LLMEngine) -> None:
        """Takes `engine` over: from now on only the worker thread may step it."""
        self.engine = engine
        self.counters = EngineCounters()
        self.integrity_failures = 0
        self.jobs: dict[int, Job] = {}               # seq_id -> job, touched by the worker only
        self._inbox: queue.Queue = queue.Queue()      # ("add", job) | ("abort", seq_id) | None (stop)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._work, name="engine-worker", daemon=True)
        self._thread.start()

    @classmethod
    def from_pretrained(cls, spec: str | Path = DEFAULT_MODEL, device: str | torch.device = "cpu",
                        dtype: str | torch.dtype = torch.float32, **options) -> AsyncEngine:
        """Blocking (seconds): load off the event loop, e.g. with `asyncio.to_thread`.
        `options`: `EngineConfig` fields (num_kv_blocks, max_num_seqs, enable_prefix_caching...)."""
        return cls(LLMEngine.from_pretrained(spec, device, dtype, **options))

    @classmethod
    def from_config(cls, config: EngineConfig) -> AsyncEngine:
        return cls(LLMEngine.from_config(config))

    @property
    def tokenizer(self) -> Tokenizer:
        return self.engine.tokenizer

    @property
    def model_name(self) -> str:
        return self.engine.model_name

    @property
    def max_context(self) -> int:
        return self.engine.max_context

    @property
    def num_waiting(self) -> int:
        return self.engine.num_waiting + self._inbox.qsize()

    @property
    def num_running(self) -> int:
        return self.engine.num_running

    def stats(self) -> dict:
        """KV blocks (total, free, cached, in use), prefix hit rate, running / waiting, preemptions,
        request counts and recent TTFT / TPOT medians."""
        return self.engine.stats() | {"waiting": self.num_waiting, "abandoned": self.counters.abandoned}

    def validate(self, prompt_token_ids: list[int], params: SamplingParams) -> None:
        """Raise the `ValueError` `generate` would raise, without starting anything."""
        self.engine.validate(prompt_token_ids, params)

    async def generate(self, prompt_token_ids: list[int], params: SamplingParams,
                       request_id: str | None = None, tenant: str | None = None,
                       priority: int = 0, guide: GuideSpec | None = None) -> AsyncIterator[RequestOutput]:
        """Stream a request's outputs; the last one carries `metrics`. Higher `priority` runs first.
        `tenant` scopes prefix reuse. `guide`: the grammar the output follows (compiled off the event
        loop, once per spec). Leaving the loop early aborts the request. A full waiting queue
        (`max_waiting`) refuses the request at once with `EngineOverloadedError`."""
        if self._stopping.is_set():
            raise EngineShutdownError("the engine is shut down")
        self.validate(prompt_token_ids, params)
        limit = self.engine.engine_config.max_waiting
        if self.num_waiting >= limit:
            raise EngineOverloadedError(self.num_waiting, limit)
        state = await asyncio.to_thread(self.engine.guide_state, guide, params) if guide else None
        seq = Sequence(list(prompt_token_ids), params, request_id, tenant=tenant, priority=priority,
                       guide=state)
        job = Job(seq, asyncio.get_running_loop())
        self._inbox.put(("add", job))
        finished = False
        try:
            while True:
                item = await job.outputs.get()
                if isinstance(item, BaseException):
                    finished = True
                    raise item
                yield item
                if item.finished:
                    finished = True
                    return
        finally:
            if not finished:
                job.abandoned.set()
                self._inbox.put(("abort", seq.seq_id))

    async def shutdown(self) -> None:
        """Stop the worker; requests still queued or running end with `EngineShutdownError`."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._inbox.put(None)
        await asyncio.to_thread(self._thread.join)

    # -- worker thread ------------------------------------------------------------------------------

    def _work(self) -> None:
        dirty = False
        while self._drain():
            try:
                if self.engine.has_unfinished():
                    dirty = True
                    for out in self.engine.step():
                        self._deliver(out)
                if dirty and not self.engine.has_unfinished():
                    dirty = False
                    self._check()
            except BatchFailed as exc:
                self._fail(exc.seq_ids, exc.cause)
            except Exception as exc:  # a bug must not strand every consumer
                log.exception("engine worker error; failing the requests in flight")
                self._fail(list(self.jobs), exc)
        self._end_all()

    def _check(self) -> None:
        if not self.engine.engine_config.check_integrity:
            return
        try:
            self.engine.check_integrity()
        except AssertionError:
            self.integrity_failures += 1
            log.exception("KV block accounting is broken")

    def _drain(self) -> bool:
        """Apply queued adds and aborts; block while there is nothing to run. False once stopping."""
        while True:
            idle = not self.engine.has_unfinished()
            try:
                message = self._inbox.get(timeout=IDLE_POLL_S) if idle else self._inbox.get_nowait()
            except queue.Empty:
                return not self._stopping.is_set()
            if message is None:
                return False
            kind, arg = message
            if kind == "add":
                self._add(arg)
            else:
                self._abort(arg)

    def _add(self, job: Job) -> None:
        if job.abandoned.is_set():
            self.counters.abandoned += 1
            return
        try:
            self.engine.add_request(job.seq)
        except Exception as exc:  # noqa: BLE001 - surfaced to its consumer
            job.push(exc)
            return
        self.jobs[job.seq.seq_id] = job

    def _abort(self, seq_id: int) -> None:
        if self.jobs.pop(seq_id, None) is not None and self.engine.abort(seq_id):
            self.counters.abandoned += 1

    def _deliver(self, out: RequestOutput) -> None:
        job = self.jobs.get(out.seq_id)
        if job is None:
            return
        if out.finished:
            self.counters.finished += 1
            del self.jobs[out.seq_id]
        job.push(out)
        if not out.finished and job.abandoned.is_set():
            self._abort(out.seq_id)

    def _fail(self, seq_ids: list[int], cause: BaseException) -> None:
        log.error("engine step failed: %r", cause)
        for seq_id in seq_ids:
            self.engine.abort(seq_id)
            if (job := self.jobs.pop(seq_id, None)) is not None:
                self.counters.failed += 1
                job.push(cause)

    def _end_all(self) -> None:
        """On shutdown: every request still queued or running ends with `EngineShutdownError`."""
        while not self._inbox.empty():
            if (message := self._inbox.get_nowait()) is not None and message[0] == "add":
                self.jobs[message[1].seq.seq_id] = message[1]
        for seq_id, job in list(self.jobs.items()):
            self.engine.abort(seq_id)
            job.push(EngineShutdownError("the engine shut down before this request finished"))
        self.jobs.clear()
