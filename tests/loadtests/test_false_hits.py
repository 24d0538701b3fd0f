"""False-hit accounting: a hit whose text only other intents' misses received is false; a hit whose
text no miss received is unverified; a follow-up is judged by its own conversation's intent."""
from __future__ import annotations

from loadtests.loadgen.falsehits import judge
from loadtests.loadgen.metrics import summarize
from loadtests.loadgen.result import Result


def r(label, outcome, text):
    return Result(label, 0.0, outcome, 10.0, 5.0, text)


def test_a_hit_serving_another_intents_answer_is_false():
    results = [r("billing.refund", "miss", "Refunds take 5 days."), r("orders.cancel", "miss", "Open Orders."),
               r("billing.refund", "hit-semantic", "Open Orders."), r("orders.cancel", "hit-exact", "Open Orders.")]
    v = judge(results)
    assert (v.hits, v.false, v.correct, v.unverified) == (2, 1, 1, 0)
    assert v.false_by_tier == {"hit-semantic": 1}
    assert v.examples[0]["asked"] == "billing.refund" and v.examples[0]["served_answer_of"] == ["orders.cancel"]


def test_a_follow_up_answered_from_another_conversation_is_false():
    results = [r("returns.item|duration", "miss", "About two weeks."),
               r("shipping.package|duration", "miss", "Three to five days."),
               r("shipping.package|duration", "hit-semantic", "About two weeks."),
               r("returns.item|duration", "hit-semantic", "About two weeks.")]
    v = judge(results)
    assert (v.false, v.correct) == (1, 1)


def test_a_hit_no_miss_of_the_run_received_is_unverified():
    v = judge([r("a", "miss", "x"), r("a", "hit-exact", "stored by an earlier run")])
    assert (v.hits, v.unverified, v.false) == (1, 1, 0)
    assert v.unverified_by_tier == {"hit-exact": 1}


def test_a_hit_listed_before_its_miss_finished_is_still_verified():
    assert judge([r("a", "hit-semantic", "x"), r("a", "miss", "x")]).correct == 1


def test_a_text_two_intents_received_is_right_for_both():
    results = [r("a", "miss", "Please contact support."), r("b", "miss", "Please contact support."),
               r("a", "hit-semantic", "Please contact support."), r("b", "hit-semantic", "Please contact support.")]
    v = judge(results)
    assert (v.correct, v.false, v.ambiguous_texts) == (2, 0, 1)


def test_errors_never_teach_the_map_and_bypasses_do():
    failed = Result("b", 0.0, "error", 10.0, None, "x", error="stream_error")
    results = [failed, r("c", "bypass", "y"), r("a", "hit-exact", "x"), r("a", "hit-exact", "y")]
    v = judge(results)
    assert (v.unverified, v.false) == (1, 1)


def test_the_report_rate_is_false_hits_over_all_hits():
    results = [r("a", "miss", "x"), r("b", "miss", "y"), r("a", "hit-exact", "x"), r("a", "hit-semantic", "y"),
               r("b", "hit-semantic", "y"), r("b", "hit-semantic", "never seen")]
    report = summarize(results, wall_s=1.0)
    assert report["false_hits"] == 1 and report["unverified_hits"] == 1
    assert report["false_hit_rate"] == 0.25
    assert report["false_hits_by_tier"] == {"hit-semantic": 1}
