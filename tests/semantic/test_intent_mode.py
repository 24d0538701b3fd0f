"""Intent mode of `cachegate eval semantic`: K questions per intent warm the real tier, test and out-of-scope
questions are looked up, and a served answer counts as right only for the question's own intent."""
from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from cachegate.cache.semantic.embedder import Embedder
from cachegate.commands import evaluate
from cachegate.evaluation.intents import intent_mode, read_intents, warm_set

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
