"""The report's arithmetic on a hand-made list of results: rates, percentiles per outcome, savings,
effective tokens per second, errors by kind, budget share, and a timeline that adds up."""
from __future__ import annotations

import numpy as np
import pytest

from loadtests.loadgen.metrics import summarize, timeline
from loadtests.loadgen.result import Result


def answered(label, outcome, latency, ttft=None, text=None, tokens=(10, 5), at=0.0, follow_up=False):
    return Result(label, at, outcome, latency, ttft if ttft is not None else latency / 2,
                  text if text is not None else f"answer of {label}", tokens[0], tokens[1], follow_up=follow_up)


def failed(label, error, at=0.0):
    return Result(label, at, "error", 30.0, None, error=error)


@pytest.fixture
def results():
    return [answered("a", "miss", 900, at=0.0), answered("b", "miss", 1100, at=1.0),
            answered("c", "bypass", 1000, tokens=(8, 4), at=2.0),
            answered("a", "hit-exact", 4, at=3.0), answered("a", "hit-exact", 6, at=4.0),
            answered("a", "hit-semantic", 30, text="answer of a", tokens=(12, 5), at=5.0),
            answered("b", "miss", 1200, at=6.0),
            failed("c", "http_500", at=7.0), failed("a", "TimeoutError", at=8.0), failed("b", "http_500", at=9.0)]


def test_counts_add_up(results):
    r = summarize(results, wall_s=10.0)
    assert r["requests"] == 10 and r["errors"] == 3 and r["answered"] == 7
    assert sum(r["by_outcome"].values()) + r["errors"] == r["requests"]
    assert r["errors_by_kind"] == {"http_500": 2, "TimeoutError": 1}


def test_hit_rates_are_shares_of_answered_requests(results):
    r = summarize(results, wall_s=10.0)
    assert r["hit_rate"] == round(3 / 7, 4)
    assert r["exact_hit_rate"] == round(2 / 7, 4)
    assert r["semantic_hit_rate"] == round(1 / 7, 4)


def test_percentiles_per_outcome_and_overall(results):
    r = summarize(results, wall_s=10.0)
    misses = [900, 1100, 1200]
    assert r["outcomes"]["miss"]["latency_ms"]["p50"] == pytest.approx(np.percentile(misses, 50))
    assert r["outcomes"]["miss"]["latency_ms"]["p99"] == pytest.approx(np.percentile(misses, 99), abs=0.1)
    assert r["outcomes"]["hit-exact"]["ttft_ms"]["p50"] == pytest.approx(2.5)
    assert r["outcomes"]["miss"]["throughput_rps"] == pytest.approx(0.3)
    everything = [900, 1100, 1000, 4, 6, 30, 1200]
    assert r["p50_ms"] == pytest.approx(np.percentile(everything, 50))
    assert r["p99_ms"] == pytest.approx(np.percentile(everything, 99), abs=0.1)


def test_savings_and_effective_tokens_per_second(results):
    r = summarize(results, wall_s=10.0, price_in_per_1k=1.0, price_out_per_1k=2.0)
    assert r["tokens_saved"] == (10 + 5) * 2 + (12 + 5)          # the usage the three hits carried
    assert r["cost_saved"] == pytest.approx((32 * 1.0 + 15 * 2.0) / 1000)
    assert r["completion_tokens"] == 5 * 6 + 4
    assert r["effective_tokens_per_s"] == pytest.approx(3.4)
    assert r["throughput_rps"] == pytest.approx(0.7)


def test_budget_share_counts_answers_within_it(results):
    r = summarize(results, wall_s=10.0, budget_ms=200)
    assert r["within_budget"] == round(3 / 7, 4)
    assert r["within_budget_by_outcome"]["hit-exact"] == 1.0 and r["within_budget_by_outcome"]["miss"] == 0.0
    assert summarize(results, wall_s=10.0)["within_budget"] is None


def test_timeline_accounts_for_every_result(results):
    rows = timeline(results, wall_s=10.0, buckets=5)
    assert sum(row["answered"] for row in rows) == 7
    assert sum(row["errors"] for row in rows) == 3
    assert sum(row["hit-exact"] + row["hit-semantic"] for row in rows) == 3
    assert all(0 <= row["hit_rate"] <= 1 for row in rows)


def test_the_ceiling_is_what_the_stream_allowed():
    def asked(label, wording, at):
        return Result(label, at, "miss", 100.0, 50.0, "t", asked=wording)
    stream = [asked("a", "how do I A", 0), asked("a", "how do I A", 1), asked("a", "how can I A", 2),
              asked("b", "how do I B", 3), asked("a|cost", "how do I A|is it free", 4)]
    assert summarize(stream, wall_s=5.0)["ceiling"] == {"exact_hit_rate": 0.2, "hit_rate": 0.4}


def test_an_empty_run_reports_zeros():
    r = summarize([], wall_s=0.0)
    assert r["requests"] == 0 and r["hit_rate"] == 0.0 and r["p99_ms"] is None and r["false_hit_rate"] == 0.0
