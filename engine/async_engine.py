"""`AsyncEngine`: the asyncio streaming API over `LLMEngine`.

Forward passes run in one background worker thread, never on the event loop. Requests wait in a
priority queue and run one at a time (batching comes with the scheduler). A consumer that stops
iterating marks its request abandoned; the worker drops it before its next forward pass.
"""
from __future__ import annotations

import asyncio
import itertools
import queue
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import torch

from engine.config import EngineConfig
from engine.errors import EngineShutdownError
from engine.llm_engine import LLMEngine
from engine.loader import DEFAULT_MODEL
from engine.outputs import RequestOutput
from engine.sampling_params import SamplingParams
from engine.sequence import Sequence
from engine.tokenizer import Tokenizer


@dataclass
class Job:
    """A queued request and the way back to its consumer's event loop."""
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
        self.engine = engine
        self.counters = EngineCounters()
        self._queue: queue.PriorityQueue = queue.PriorityQueue()
        self._order = itertools.count()
        self._running: Job | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._work, name="engine-worker", daemon=True)
        self._thread.start()

    @classmethod
    def from_pretrained(cls, spec: str | Path = DEFAULT_MODEL, device: str | torch.device = "cpu",
                        dtype: str | torch.dtype = torch.float32) -> AsyncEngine:
        """Blocking (seconds): load off the event loop, e.g. with `asyncio.to_thread`."""
        return cls(LLMEngine.from_pretrained(spec, device, dtype))

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
        return self._queue.qsize()

    @property
    def num_running(self) -> int:
        return int(self._running is not None)

    def validate(self, prompt_token_ids: list[int], params: SamplingParams) -> None:
        """Raise the `ValueError` `generate` would raise, without starting anything."""
        self.engine.validate(prompt_token_ids, params)

    async def generate(self, prompt_token_ids: list[int], params: SamplingParams,
                       request_id: str | None = None, tenant: str | None = None,
                       priority: int = 0) -> AsyncIterator[RequestOutput]:
        """Stream a request's outputs. Higher `priority` runs first. Leaving the loop (aclose,
        cancellation) abandons the request; its KV cache is freed before the next forward pass."""
        if self._stopping.is_set():
            raise EngineShutdownError("the engine is shut down")
        self.validate(prompt_token_ids, params)
        seq = Sequence(list(prompt_token_ids), params, tenant=tenant, priority=priority)
        seq.request_id = request_id or seq.request_id
        job = Job(seq, asyncio.get_running_loop())
        self._queue.put((-priority, next(self._order), job))
        try:
            while True:
                item = await job.outputs.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
                if item.finished:
                    return
        finally:
            job.abandoned.set()

    async def shutdown(self) -> None:
        """Stop the worker; requests still queued or running end with `EngineShutdownError`."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._queue.put((float("-inf"), -1, None))
        await asyncio.to_thread(self._thread.join)
        while not self._queue.empty():
            if (job := self._queue.get_nowait()[2]) is not None:
                job.push(EngineShutdownError("the engine shut down before this request ran"))

    def _work(self) -> None:
        while True:
            job = self._queue.get()[2]
            if job is None:
                return
            self._running = job
            try:
                self._run(job)
            finally:
                self._running = None

    def _run(self, job: Job) -> None:
        """Runs on the worker thread. The abandoned flag is checked before every forward pass."""
        if job.abandoned.is_set():
            self.counters.abandoned += 1
            return
        stream = self.engine.stream(job.seq)
        try:
            for out in stream:
                if out.finished:  # book-keeping first, so a consumer seeing its last output sees it done
                    self.counters.finished += 1
                    self._running = None
                    job.push(out)
                    return
                job.push(out)
                if job.abandoned.is_set():
                    self.counters.abandoned += 1
                    return
                if self._stopping.is_set():
                    job.push(EngineShutdownError("the engine shut down during this request"))
                    return
        except Exception as e:  # noqa: BLE001 - surfaced to the consumer, the worker keeps serving
            self.counters.failed += 1
            job.push(e)
        finally:
            stream.close()
