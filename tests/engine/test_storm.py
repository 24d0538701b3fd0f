"""A storm of 50 concurrent requests through the async API, a third of them cancelled at random points
(before their first token, mid-stream, by a dropped task): afterwards no block is in use, the cached
ones all go back to the free list, and the idle worker found the accounting intact.
"""
from __future__ import annotations

import asyncio
import random
from contextlib import aclosing

import pytest

from engine.async_engine import AsyncEngine
from engine.sampling_params import SamplingParams
from tests.engine.conftest import engine_for

pytestmark = pytest.mark.slow
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo"]


async def client(engine: AsyncEngine, ids: list[int], max_tokens: int, cancel_after: int | None) -> str:
    params = SamplingParams(max_tokens=max_tokens, temperature=0.8, seed=len(ids))
    got = 0
    async with aclosing(engine.generate(ids, params, tenant=f"t{len(ids) % 3}", priority=len(ids) % 2)) as s:
        async for out in s:
            got += 1
            if cancel_after is not None and got >= cancel_after:
                return "cancelled"
            if out.finished:
                return "finished"
    return "ended"


@pytest.mark.parametrize("caching", [True, False])
async def test_storm_of_50_with_random_cancellation_frees_every_block(checkpoint, tokenizer, caching):
    rng = random.Random(7)
    llm = engine_for(checkpoint, num_kv_blocks=48, max_num_batched_tokens=128, enable_prefix_caching=caching)
    engine = AsyncEngine(llm)
    try:
        prompts = [tokenizer.encode(" ".join(rng.choices(WORDS, k=rng.randint(2, 40)))) for _ in range(50)]
        plans = [rng.choice([None, None, 1, 3]) for _ in prompts]
        tasks = [asyncio.create_task(client(engine, p, rng.randint(2, 12), c)) for p, c in zip(prompts, plans)]
        await asyncio.sleep(0.05)
        for task in rng.sample(tasks, 5):                        # consumers that vanish outright
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert sum(r == "finished" for r in results) >= 20
        for _ in range(500):                                     # aborts reach the worker between steps
            if not (engine.num_running or engine.num_waiting):
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
    finally:
        await engine.shutdown()
    usage = llm.check_integrity()
    assert usage.in_use == 0 and usage.free + usage.cached == usage.total
    if llm.blocks.cache is not None:
        llm.blocks.cache.evict(usage.total)
    assert llm.blocks.allocator.num_free == usage.total
    assert engine.integrity_failures == 0 and engine.counters.failed == 0
