"""Intent mode of `cachegate eval semantic`: K questions per intent warm the real tier, test and out-of-scope
questions are looked up, and a served answer counts as right only for the question's own intent."""
from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pytest

from cachegate.cache.semantic.embedder import Embedder
from cachegate.commands import evaluate
from cachegate.evaluation.intents import IntentSet, cached_intents, intent_mode, read_intents, warm_set

TINY = Path(__file__).parent / "data" / "intents_tiny.json"


def test_warm_set_takes_k_per_intent_reproducibly():
    rows = [(f"q{i}", "a" if i < 6 else "b") for i in range(9)]
    chosen = warm_set(rows, 2, seed=3)
    assert sorted(i for _, i in chosen) == ["a", "a", "b", "b"] and chosen == warm_set(rows, 2, seed=3)


def test_intent_mode_counts_served_right_and_wrong_through_the_tier():
    args = argparse.Namespace(policy="cosine", threshold=0.98)
    tier = evaluate.make_tier(args, Embedder(precision="float32"))
    report = asyncio.run(intent_mode(tier, read_intents(TINY), per_intent=5))
    # the two test questions cached word for word are served their own intent; the painting question is not
    # served; the out-of-scope question cached under "weather" is served, and wrong
    assert report["in_scope"] == {"lookups": 3, "served": 2, "wrong": 0, "hit_rate": 0.6667, "false_hit_rate": 0.0}
    assert report["out_of_scope"]["lookups"] == 2 and report["out_of_scope"]["served"] == 1
    assert (report["lookups"], report["served"], report["wrong"]) == (5, 3, 1)
    assert report["hit_rate"] == 0.6 and report["false_hit_rate"] == 0.3333
    assert report["entries"] == 6 and report["intents"] == 3


def test_domains_keep_only_their_intents(tmp_path):
    domains = tmp_path / "tiny_domains.json"
    domains.write_text('{"banking": ["freeze_account", "routing"], "utility": ["weather"]}')
    data = read_intents(TINY, ["banking"], domains)
    assert {i for _, i in data.train} == {"freeze_account", "routing"}
    assert [i for _, i in data.test] == ["freeze_account", "routing"]


def test_coverage_keeps_a_seeded_share_of_the_intents():
    names = {f"intent{k}" for k in range(10)}
    half = cached_intents(names, 0.5, seed=1)
    assert len(half) == 5 and half <= names and half == cached_intents(names, 0.5, seed=1)
    assert cached_intents(names, 1.0) == names and len(cached_intents(names, 0.01)) == 1
    for wrong in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError):
            cached_intents(names, wrong)


def test_an_answer_served_to_an_intent_not_cached_is_wrong():
    seed = next(s for s in range(50) if cached_intents({"freeze", "routing"}, 0.5, s) == {"freeze"})
    data = IntentSet(train=[("how do i freeze my account", "freeze"), ("what is my routing number", "routing")],
                     test=[("how do i freeze my account", "freeze"),      # cached word for word: right
                           ("how do i freeze my account", "routing"),     # its intent was never cached: wrong
                           ("what is my routing number", "routing")],     # nothing cached near it: a miss
                     oos_test=[])
    tier = evaluate.make_tier(argparse.Namespace(policy="cosine", threshold=0.98), Embedder(precision="float32"))
    report = asyncio.run(intent_mode(tier, data, per_intent=5, seed=seed, coverage=0.5))
    assert report["entries"] == 1 and report["intents"] == 1 and report["coverage"] == 0.5
    assert report["in_scope"] == {"lookups": 1, "served": 1, "wrong": 0, "hit_rate": 1.0, "false_hit_rate": 0.0}
    assert report["uncached"] == {"lookups": 2, "served": 1, "wrong": 1, "hit_rate": 0.5, "false_hit_rate": 1.0}
    assert (report["served"], report["wrong"]) == (2, 1)
    assert "not cached" in "\n".join(evaluate.intent_lines(report))


def test_eval_refuses_a_coverage_outside_zero_to_one():
    p = argparse.ArgumentParser()
    evaluate.add_arguments(p)
    with pytest.raises(SystemExit, match="coverage"):
        evaluate.run(p.parse_args(["--intents", str(TINY), "--coverage", "0"]))


def test_eval_reports_the_precision_its_embedder_ran_in(capsys):
    p = argparse.ArgumentParser()
    evaluate.add_arguments(p)
    assert evaluate.run(p.parse_args(["--intents", str(TINY), "--json"])) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["embedder_precision"] == Embedder(cache_size=0).precision
    assert report["embedder_precision"] in ("float32", "bfloat16")
