"""The embedder: forward calls planned by cost keep row order, and bfloat16 (where the CPU has it) agrees
with float32."""
from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from cachegate.cache.semantic import embedder as embedder_module
from cachegate.cache.semantic import encoder_models, precision_timing
from cachegate.cache.semantic.embedder import Embedder, batch_plan, native_bf16, resolve_precision


def plan_cost(groups: list[list[int]], tokens: list[int], call: int) -> int:
    return sum(call + len(g) * max(tokens[r] for r in g) for g in groups)


def test_batch_plan_shares_a_call_among_short_questions_and_isolates_a_long_context():
    tokens = [12, 9, 300, 14, 11, 10]
    groups = batch_plan(tokens, max_batch=64, call_tokens=40)
    assert groups == [[1, 5, 4, 0, 3], [2]]


def test_batch_plan_merges_lengths_when_a_call_costs_more_than_the_padding():
    assert len(batch_plan([10, 30, 12, 28], max_batch=64, call_tokens=40)) == 1
    assert len(batch_plan([10, 30, 12, 28], max_batch=64, call_tokens=10)) == 2


def test_batch_plan_is_the_cheapest_split_and_respects_max_batch():
    rng = random.Random(0)
    for _ in range(200):
        tokens = [rng.randint(3, 120) for _ in range(rng.randint(1, 8))]
        max_batch, call = rng.randint(1, 4), rng.choice([0, 20, 40, 200])
        groups = batch_plan(tokens, max_batch, call)
        assert sorted(r for g in groups for r in g) == list(range(len(tokens)))
        assert all(1 <= len(g) <= max_batch for g in groups)
        order = sorted(range(len(tokens)), key=tokens.__getitem__)
        cheapest = min(plan_cost([order[a:b] for a, b in zip((0, *cuts), (*cuts, len(order)))], tokens, call)
                       for k in range(len(order)) for cuts in itertools.combinations(range(1, len(order)), k)
                       if all(b - a <= max_batch for a, b in zip((0, *cuts), (*cuts, len(order)))))
        assert plan_cost(groups, tokens, call) == cheapest


def test_mixed_lengths_encode_like_one_at_a_time():
    embedder = Embedder(precision="float32")
    texts = ["How do I reset my password?", "user: " + "tell me about Paris. " * 40, "Who wrote Hamlet?"]
    together = embedder.encode(texts)
    alone = np.stack([embedder.encode([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-4)


@pytest.mark.skipif(not native_bf16(), reason="this CPU has no native bfloat16")
def test_bfloat16_agrees_with_float32():
    texts = ["How do I reset my password?", "What is the capital of France?", "Is the store open on Sunday?"]
    a, b = Embedder(precision="float32").encode(texts), Embedder(precision="bfloat16").encode(texts)
    assert np.min(np.sum(a * b, axis=1)) > 0.999


@pytest.mark.parametrize(("flags", "faster", "chosen"), [
    ({"avx2"}, True, "float32"),                           # emulated bfloat16: never, whatever a timing says
    ({"avx512_bf16"}, False, "float32"),                   # native but slower on this host
    ({"avx512_bf16"}, True, "bfloat16"),                   # native and faster on this host
    ({"avx512_bf16", "amx_bf16"}, False, "bfloat16"),      # AMX tiles: always, untimed
])
def test_auto_precision_is_bfloat16_where_amx_or_a_timing_says_it_is_faster(monkeypatch, flags, faster, chosen):
    timed = []

    def timing(model, threads):
        timed.append((model, threads))
        ms = {"float32": 10.0, "bfloat16": 6.0 if faster else 14.0}
        return precision_timing.PrecisionTiming(ms, ms)
    monkeypatch.setattr(embedder_module, "cpu_flags", lambda: flags)
    monkeypatch.setattr(precision_timing, "timed_precisions", timing)
    assert resolve_precision("auto", "some-model", 2) == chosen
    assert timed == ([("some-model", 2)] if flags == {"avx512_bf16"} else [])
    assert resolve_precision("float32") == "float32" and resolve_precision("bfloat16") == "bfloat16"
    assert embedder_module.native_bf16() is bool(flags & {"avx512_bf16", "amx_bf16"})


@pytest.mark.parametrize(("lone", "batch", "chosen"), [
    ((10.0, 6.0), (90.0, 60.0), "bfloat16"),
    ((10.0, 9.0), (60.0, 99.0), "float32"),     # faster alone, slower on a batch: float32 serves more under load
    ((10.0, 11.0), (90.0, 60.0), "float32"),
])
def test_bfloat16_must_win_alone_and_on_a_batch(lone, batch, chosen):
    timing = precision_timing.PrecisionTiming(dict(zip(precision_timing.COMPARED, lone)),
                                              dict(zip(precision_timing.COMPARED, batch)))
    assert timing.as_dict()["chosen"] == chosen


@pytest.mark.skipif(not native_bf16(), reason="this CPU has no native bfloat16")
def test_the_timing_runs_both_precisions_and_lets_the_loser_go():
    precision_timing.timed_precisions.cache_clear()
    for p in precision_timing.COMPARED:       # loaded by earlier tests: the timing keeps what it did not load
        encoder_models.unload(encoder_models.PACKAGED, p)
    timing = precision_timing.timed_precisions(embedder_module.PACKAGED, 1)
    assert all(0 < timing.lone_ms[p] < timing.batch_ms[p] < 10_000 for p in precision_timing.COMPARED)
    kept = {p for p in precision_timing.COMPARED if encoder_models.is_loaded(encoder_models.PACKAGED, p)}
    assert kept == {timing.as_dict()["chosen"]}


def test_a_precision_that_fails_to_time_leaves_float32(monkeypatch):
    def broken(model):
        raise RuntimeError("no bfloat16 kernel for this model")
    monkeypatch.setattr(precision_timing, "time_both", broken)
    precision_timing.timed_precisions.cache_clear()
    try:
        timing = precision_timing.timed_precisions("a-model-without-bf16", 1)
    finally:
        precision_timing.timed_precisions.cache_clear()
    assert timing is precision_timing.FAILED and not timing.bf16_faster
