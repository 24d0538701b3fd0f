"""The complexity router over plain requests: simple and short go small, long or demanding go large."""
from __future__ import annotations

import pytest

from policies.routing import LARGE, SMALL, ComplexityRouter, ComplexityWeights, RouteInput

router = ComplexityRouter()


def chat(text: str, **kw) -> RouteInput:
    return RouteInput(kind="chat", text=text, prompt_tokens=kw.pop("prompt_tokens", len(text) // 4), **kw)


@pytest.mark.parametrize("text", [
    "What is the capital of France?", "hi!", "How do I reset my password?", "Translate 'good morning' to Spanish",
])
def test_simple_questions_go_small(text):
    assert router.route(chat(text)).tier == SMALL


@pytest.mark.parametrize("text", [
    "Prove that the square root of 2 is irrational, step by step.",
    "Explain in detail the trade-offs between optimistic and pessimistic locking.",
    "Design a rate limiter for a distributed API and compare the token bucket and sliding window approaches.",
])
def test_reasoning_heavy_requests_go_large(text):
    decision = router.route(chat(text))
    assert decision.tier == LARGE
    assert decision.reasons


def test_short_code_completions_take_the_small_path_even_with_code_cues():
    r = RouteInput(kind="completions", text="def solve(matrix):\n    return", prompt_tokens=12, max_tokens=64)
    assert router.route(r).tier == SMALL


def test_long_completions_are_scored():
    r = RouteInput(kind="completions", text="x", prompt_tokens=1500, max_tokens=400)
    assert router.route(r).tier == LARGE


def test_long_prompt_goes_large():
    assert router.route(chat("Summarize this.", prompt_tokens=1200)).tier == LARGE


def test_long_requested_answer_goes_large():
    assert router.route(chat("Write about dogs.", max_tokens=600)).tier == LARGE


def test_many_turns_add_up():
    assert router.route(chat("and then?", turns=2)).tier == SMALL
    assert router.route(chat("and then?", turns=9)).tier == LARGE


def test_threshold_and_weights_come_from_config():
    strict = ComplexityRouter(threshold=10.0)
    assert strict.route(chat("Prove it step by step in detail.")).tier == SMALL
    no_math = ComplexityRouter(weights=ComplexityWeights(math=0.0))
    assert no_math.route(chat("Solve 2 + 2")).tier == SMALL
    assert router.route(chat("Solve this equation: 3x + 5 = 20")).tier == LARGE


def test_score_grows_with_each_cue():
    plain = router.score(chat("Tell me about rivers."))[0]
    cued = router.score(chat("Tell me about rivers in detail, step by step."))[0]
    assert cued > plain
