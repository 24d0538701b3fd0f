"""`python -m loadtests.cache_replay`: each opening question looked up once (a word-for-word repeat is the exact
tier's), a miss stored, a hit judged by the intent whose question stored the answer it served; the windows add
up to the totals."""
from __future__ import annotations

import asyncio
import json

from cachegate.evaluation import lookups
from cachegate.verified.labels import read_labels
from loadtests.cache_replay import ShadowChecks, Window, main, replay


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
    assert [w.wrong_unaskable for w in windows] == [0, 1, 0]     # 'stolen' was never asked: nothing right to serve
    assert [(h["asked"], h["served_for"], h["intent"] == h["served_intent"]) for h in hits] == [
        ("card gone", "card lost", True), ("card stolen", "card lost", False), ("pin forgot", "pin reset", True)]
    total = Window()
    for w in windows:
        total = total.add(w)
    assert total.wrong_unaskable == 1
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
        for key in ("lookups", "askable", "served", "wrong", "wrong_unaskable"):
            assert t[key] == sum(w[key] for w in windows), (mode, key)
        assert 0 < t["lookups"] <= 60 and t["askable"] < t["lookups"]
        assert t["wrong_unaskable"] <= t["wrong"] <= t["served"] <= t["lookups"]
        assert t["entries"] == t["lookups"] - t["served"]       # every miss stored, no hit stored
        assert [w["entries"] for w in windows] == sorted(w["entries"] for w in windows)
    assert report["answers"]["distinct"]["total"]["lookups"] == report["answers"]["reference"]["total"]["lookups"]
    assert "right of askable" in capsys.readouterr().out
    written, hits = read_labels(str(labels)), report["answers"]["distinct"]["hits"]
    assert len(written) == len(hits) == report["answers"]["distinct"]["total"]["served"]
    assert sum(not label.good for label in written) == report["answers"]["distinct"]["total"]["wrong"]


class Recorder:
    """Stands in for the target controller: keeps the verdicts it is given."""

    def __init__(self) -> None:
        self.verdicts: list[tuple[str, bool, str]] = []

    def record(self, namespace: str, good: bool, source: str) -> None:
        self.verdicts.append((namespace, good, source))


def test_shadow_checks_verify_a_seeded_share_of_hits():
    every, none = ShadowChecks(Recorder(), 1.0), ShadowChecks(Recorder(), 0.0)
    assert [every.maybe(g) for g in (True, False, True)] == [True, True, True]
    assert every.controller.verdicts == [("default", True, "shadow"), ("default", False, "shadow"),
                                         ("default", True, "shadow")]
    assert not any(none.maybe(True) for _ in range(50)) and none.controller.verdicts == []
    some = [ShadowChecks(Recorder(), 0.3, seed=5) for _ in range(2)]
    drawn = [[s.maybe(True) for _ in range(400)] for s in some]
    assert drawn[0] == drawn[1] and 80 < sum(drawn[0]) < 160


def test_checked_hits_tighten_the_real_tier_when_they_are_wrong():
    """Every hit checked, most of them wrong: the controller steps the matcher's target down and the report keeps
    the change."""
    from cachegate.cache.semantic.embedder import Embedder
    from loadtests.cache_replay import make_checks, make_tier
    tier = make_tier(Embedder(precision="float32"), "packaged")
    checks = make_checks(tier, 1.0, seed=0)
    before = tier.policy
    for k in range(25):
        checks.maybe(k % 4 == 0)
    assert tier.policy is not before and tier.policy.namespaces["default"] < before.target
    assert checks.controller.view()["changes"][0]["knob"] == "target_false_hit_rate"
    assert make_checks(tier, 0.0, seed=0) is None


def test_replay_cli_with_shadow_checks_counts_them(tmp_path, capsys):
    assert main(["--sessions", "40", "--window", "20", "--answers", "distinct", "--verify-rate", "1",
                 "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "cache_replay.json").read_text())
    r = report["answers"]["distinct"]
    assert report["verify_rate"] == 1.0 and "changes" in r
    assert r["total"]["checked"] == r["total"]["served"] == sum(w["checked"] for w in r["windows"])
    assert "shadow-checked" in capsys.readouterr().out
