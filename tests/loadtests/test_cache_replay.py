"""`python -m loadtests.cache_replay`: each opening question looked up once (a word-for-word repeat is the exact
tier's), a miss stored, a hit judged by the intent whose question stored the answer it served; the windows add
up to the totals."""
from __future__ import annotations

import asyncio
import json

from cachegate.evaluation import lookups
from cachegate.verified.labels import read_labels
from loadtests.cache_replay import Window, main, replay


def test_replay_counts_right_and_wrong_hits_and_stores_misses(monkeypatch):
    stored: dict[str, str] = {}           # question -> answer; a hit is any stored question with the same first word

    async def store(tier, question, answer):
        stored[question] = answer

    async def served(tier, question):
        return next((a for q, a in stored.items() if q.split()[0] == question.split()[0]), None)

    monkeypatch.setattr(lookups, "store", store)
    monkeypatch.setattr(lookups, "served", served)
    asked = [("card lost", "lost"), ("card lost", "lost"),          # a repeat: skipped
             ("card gone", "lost"),                                  # right: served the 'lost' question's answer
             ("card stolen", "stolen"),                              # wrong: 'stolen' gets the 'lost' answer
             ("pin reset", "pin"), ("pin forgot", "pin")]            # a miss stored, then a right hit
    hits: list[dict] = []
    windows = asyncio.run(replay(None, asked, "distinct", 2, {}, hits))
    assert [(w.lookups, w.askable, w.served, w.wrong, w.entries) for w in windows] == [
        (2, 1, 1, 0, 1), (2, 0, 1, 1, 2), (1, 1, 1, 0, 2)]
    assert [(h["asked"], h["served_for"], h["intent"] == h["served_intent"]) for h in hits] == [
        ("card gone", "card lost", True), ("card stolen", "card lost", False), ("pin forgot", "pin reset", True)]
    total = Window()
    for w in windows:
        total = total.add(w)
    assert total.rates() == {"right_of_askable": 1.0, "false_hit_rate": round(1 / 3, 4)}
    assert Window().rates() == {"right_of_askable": None, "false_hit_rate": None}


def test_replay_through_the_real_tier_writes_a_report_that_adds_up(tmp_path, capsys):
    labels = tmp_path / "labels.jsonl"
    assert main(["--sessions", "60", "--window", "20", "--labels", str(labels), "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "cache_replay.json").read_text())
    assert (tmp_path / "cache_replay.png").stat().st_size > 0
    assert set(report["answers"]) == {"distinct", "reference"}
    for mode, r in report["answers"].items():
        t, windows = r["total"], r["windows"]
        for key in ("lookups", "askable", "served", "wrong"):
            assert t[key] == sum(w[key] for w in windows), (mode, key)
        assert 0 < t["lookups"] <= 60 and t["askable"] < t["lookups"]
        assert t["wrong"] <= t["served"] <= t["lookups"]
        assert t["entries"] == t["lookups"] - t["served"]       # every miss stored, no hit stored
        assert [w["entries"] for w in windows] == sorted(w["entries"] for w in windows)
    assert report["answers"]["distinct"]["total"]["lookups"] == report["answers"]["reference"]["total"]["lookups"]
    assert "right of askable" in capsys.readouterr().out
    written, hits = read_labels(str(labels)), report["answers"]["distinct"]["hits"]
    assert len(written) == len(hits) == report["answers"]["distinct"]["total"]["served"]
    assert sum(not label.good for label in written) == report["answers"]["distinct"]["total"]["wrong"]
