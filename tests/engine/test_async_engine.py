"""AsyncEngine: streaming off the event loop, concurrent requests kept apart, abandonment when the
consumer goes away, priorities, shutdown, and errors surfaced to the right consumer.

Most tests drive a model-free stand-in (`Ticker`) so they are fast and count steps exactly; the
`slow` ones run the real model.
"""
from __future__ import annotations

import asyncio
import time
from contextlib import aclosing

import pytest

from engine.async_engine import AsyncEngine
from engine.config import EngineConfig
from engine.errors import ContextLengthError, EmptyPromptError, EngineShutdownError
from engine.llm_engine import BatchFailed
from engine.outputs import RequestOutput
from engine.sampling_params import SamplingParams
from engine.sequence import Sequence


class Ticker:
    """Stands in for LLMEngine: each step sleeps like a forward pass and gives every running request
    its next token (token i at step i); `slots` requests run at once, the rest wait by priority."""
    model_name, max_context, tokenizer = "ticker", 100, None
    engine_config = EngineConfig(check_integrity=False)

    def __init__(self, step_s: float = 0.01, fail_at: int | None = None, slots: int = 1) -> None:
        self.step_s, self.fail_at, self.slots = step_s, fail_at, slots
        self.waiting: list[Sequence] = []
        self.running: list[Sequence] = []
        self.steps: dict[str, int] = {}
        self.closed: list[str] = []
        self.order: list[str] = []

    num_running = property(lambda self: len(self.running))
    num_waiting = property(lambda self: len(self.waiting))

    def validate(self, ids, params):
        if not ids:
            raise EmptyPromptError("empty")
        if len(ids) + params.max_tokens > self.max_context:
            raise ContextLengthError(len(ids), params.max_tokens, self.max_context)

    def add_request(self, seq):
        self.waiting.append(seq)
        self.waiting.sort(key=Sequence.sort_key)

    def has_unfinished(self):
        return bool(self.waiting or self.running)

    def abort(self, seq_id):
        for seq in self.waiting + self.running:
            if seq.seq_id == seq_id:
                self.drop(seq)
                return True
        return False

    def drop(self, seq):
        for queue in (self.waiting, self.running):
            if seq in queue:
                queue.remove(seq)
        self.closed.append(seq.request_id)

    def stats(self):
        return {"running": self.num_running}

    def step(self):
        while self.waiting and len(self.running) < self.slots:
            self.running.append(self.waiting.pop(0))
            self.order.append(self.running[-1].request_id)
        time.sleep(self.step_s)
        outs = []
        for seq in list(self.running):
            i = self.steps.get(seq.request_id, 0)
            if i == self.fail_at:
                ids = [s.seq_id for s in self.running]
                raise BatchFailed(ids, RuntimeError("forward pass exploded"))
            self.steps[seq.request_id] = i + 1
            last = i + 1 == seq.params.max_tokens
            outs.append(RequestOutput(seq.request_id, f"t{i} ", [i], "length" if last else None,
                                      seq.num_prompt_tokens, i + 1, seq_id=seq.seq_id))
            if last:
                self.drop(seq)
        return outs


async def collect(engine, ids=(1, 2, 3), max_tokens=5, **kwargs):
    params = SamplingParams(max_tokens=max_tokens, temperature=0)
    outs = [o async for o in engine.generate(list(ids), params, **kwargs)]
    return [t for o in outs for t in o.token_ids], outs[-1]


@pytest.fixture
async def ticker_engine():
    engine = AsyncEngine(Ticker())
    yield engine
    await engine.shutdown()


async def test_streams_every_token_with_running_usage(ticker_engine):
    outs = [o async for o in ticker_engine.generate([1, 2], SamplingParams(max_tokens=4), request_id="r1")]
    assert [o.token_ids for o in outs] == [[0], [1], [2], [3]]
    assert [o.completion_tokens for o in outs] == [1, 2, 3, 4] and outs[0].prompt_tokens == 2
    assert [o.finish_reason for o in outs] == [None, None, None, "length"] and outs[0].request_id == "r1"


async def test_event_loop_stays_responsive_while_generating(ticker_engine):
    ticker_engine.engine.step_s = 0.2
    gaps, stop = [], asyncio.Event()

    async def heartbeat():
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
    beat = asyncio.create_task(heartbeat())
    await collect(ticker_engine, max_tokens=5)
    stop.set()
    await beat
    assert max(gaps) < 0.1         # a forward pass takes 0.2 s: it never ran on the loop


async def test_validation_errors_raise_before_any_work(ticker_engine):
    with pytest.raises(ContextLengthError):
        await collect(ticker_engine, ids=[1] * 90, max_tokens=20)
    with pytest.raises(EmptyPromptError):
        await collect(ticker_engine, ids=[])
    assert ticker_engine.engine.order == [] and ticker_engine.num_waiting == 0


async def test_closing_the_stream_abandons_the_request_and_frees_it(ticker_engine):
    ticker = ticker_engine.engine
    stream = ticker_engine.generate([1], SamplingParams(max_tokens=90), request_id="gone")
    async with aclosing(stream):
        async for out in stream:
            if out.completion_tokens == 3:
                break
    _, last = await collect(ticker_engine, max_tokens=2, request_id="next")
    assert last.finish_reason == "length"
    assert ticker.steps["gone"] <= 5 and "gone" in ticker.closed      # stopped within a step or two, freed
    assert ticker_engine.counters.abandoned == 1 and ticker_engine.num_running == 0


async def test_cancelling_the_consumer_task_abandons_the_request(ticker_engine):
    ticker = ticker_engine.engine
    seen = asyncio.Event()

    async def consume():
        async for out in ticker_engine.generate([1], SamplingParams(max_tokens=90), request_id="cancelled"):
            seen.set()
    task = asyncio.create_task(consume())
    await seen.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await collect(ticker_engine, max_tokens=2)
    assert ticker.steps["cancelled"] <= 5 and "cancelled" in ticker.closed


async def test_dropping_the_stream_without_closing_it_still_abandons(ticker_engine):
    ticker = ticker_engine.engine
    stream = ticker_engine.generate([1], SamplingParams(max_tokens=90), request_id="dropped")
    await anext(stream)
    del stream                                     # CPython finalizes it; the loop runs its aclose()
    await collect(ticker_engine, max_tokens=2)
    assert ticker.steps["dropped"] <= 5 and "dropped" in ticker.closed


async def test_requests_queued_and_abandoned_never_run(ticker_engine):
    ticker = ticker_engine.engine
    ticker.step_s = 0.02
    first = asyncio.create_task(collect(ticker_engine, max_tokens=10, request_id="first"))
    queued = asyncio.create_task(collect(ticker_engine, max_tokens=10, request_id="queued"))
    await asyncio.sleep(0.05)
    queued.cancel()
    await first
    await collect(ticker_engine, max_tokens=1)
    assert "queued" not in ticker.order


async def test_higher_priority_runs_first(ticker_engine):
    ticker = ticker_engine.engine
    busy = asyncio.create_task(collect(ticker_engine, max_tokens=10, request_id="busy"))
    await asyncio.sleep(0.03)
    low = asyncio.create_task(collect(ticker_engine, request_id="low", priority=0))
    await asyncio.sleep(0.01)
    high = asyncio.create_task(collect(ticker_engine, request_id="high", priority=5))
    await asyncio.gather(busy, low, high)
    assert ticker.order == ["busy", "high", "low"]


async def test_a_failing_request_errors_its_own_consumer_only():
    engine = AsyncEngine(Ticker(fail_at=2))
    try:
        with pytest.raises(RuntimeError, match="exploded"):
            await collect(engine, max_tokens=5)
        engine.engine.fail_at = None
        tokens, _ = await collect(engine, max_tokens=3)
        assert tokens == [0, 1, 2] and engine.counters.failed == 1
    finally:
        await engine.shutdown()


async def test_shutdown_ends_running_and_queued_requests():
    engine = AsyncEngine(Ticker(step_s=0.02))
    running = asyncio.create_task(collect(engine, max_tokens=50))
    queued = asyncio.create_task(collect(engine, max_tokens=50))
    await asyncio.sleep(0.05)
    await engine.shutdown()
    for task in (running, queued):
        with pytest.raises(EngineShutdownError):
            await task
    with pytest.raises(EngineShutdownError):
        await collect(engine)


@pytest.mark.slow
async def test_concurrent_requests_get_the_tokens_they_get_alone(llm, tokenizer):
    prompts = [tokenizer.apply_chat_template([{"role": "user", "content": q}])
               for q in ("What is 2+2?", "Name three colors.", "Say hello in Spanish.")]
    params = [SamplingParams(max_tokens=12, temperature=0),
              SamplingParams(max_tokens=10, temperature=0.9, seed=5),
              SamplingParams(max_tokens=8, temperature=0.7, top_k=20, seed=9)]
    alone = [llm.generate(p, sp) for p, sp in zip(prompts, params)]
    engine = AsyncEngine(llm)              # from here on the worker thread owns llm
    try:

        async def run(p, sp):
            outs = [o async for o in engine.generate(p, sp)]
            return [t for o in outs for t in o.token_ids], "".join(o.text for o in outs)
        together = await asyncio.gather(*(run(p, sp) for p, sp in zip(prompts, params)))
        assert [ids for ids, _ in together] == [out.token_ids for out in alone]
        assert [text for _, text in together] == [out.text for out in alone]
    finally:
        await engine.shutdown()


@pytest.mark.slow
async def test_cancelled_real_request_frees_the_engine_for_the_next(llm, tokenizer):
    engine = AsyncEngine(llm)
    before = engine.stats()
    try:
        ids = tokenizer.apply_chat_template([{"role": "user", "content": "Write a long essay about rivers."}])
        long = SamplingParams(max_tokens=500, temperature=0, ignore_eos=True)
        async with aclosing(engine.generate(ids, long)) as stream:
            async for out in stream:
                if out.completion_tokens == 2:
                    break
        tokens, last = await collect(engine, ids=ids, max_tokens=3)
        assert len(tokens) == 3 and last.finish_reason == "length"
        assert engine.counters.abandoned == 1 and engine.num_running == 0 and engine.num_waiting == 0
        stats = engine.stats()
        assert stats["requests_aborted"] == before["requests_aborted"] + 1 and stats["kv_blocks_in_use"] == 0
        assert stats["generated_tokens"] - before["generated_tokens"] < 100   # it stopped when its reader left
    finally:
        await engine.shutdown()
