"""Numbers and names an answer is seen not to depend on: when the cache holds two questions that differ in a
number (or a name) and were given the same stored answer, a third question that differs from them only there is
not vetoed for it; the cut and the margin still decide. Answers that coincide by chance (a number, a yes / no)
and answers that differ never lift a veto."""
from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import replace

import numpy as np
import pytest

from cachegate.cache.semantic.embedder import Embedder
from cachegate.commands import evaluate
from cachegate.evaluation import lookups
from policies.differences import by_chance, slots_spanned
from policies.matcher import Cut, MatcherPolicy, matcher_from_dict
from policies.thresholds import Candidate

QUERY = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)


def policy(**kw) -> MatcherPolicy:
    return MatcherPolicy(np.eye(4, dtype=np.float32), {0.02: Cut(0.8, 0.15, 1.01)}, 0.02, **kw)


def cand(cached: str, cosine: float, answer: str | None,
         query: str = "book a table for 6 at 9pm") -> Candidate:
    entry = np.array([cosine, np.sqrt(1 - cosine * cosine), 0.0, 0.0], dtype=np.float32)
    return Candidate(query, cached, cosine, query_vector=QUERY, entry_vector=entry, entry_answer=answer)


BOOKING = "To book a table, open Reservations, pick a time and the size of your party."
TABLES = [cand("book a table for 4 at 7pm", 0.95, BOOKING), cand("reserve a table for 2 at 8", 0.93, BOOKING),
          cand("what are your opening hours", 0.5, "We open at 9.")]


def choose(p: MatcherPolicy, found: list[Candidate]):
    return p.choose(found, [c.entry_answer or str(i) for i, c in enumerate(found)])


def test_a_number_the_answer_was_given_for_twice_does_not_veto():
    index, decision = choose(policy(), TABLES)
    assert index == 0 and decision.hit


def test_the_veto_stands_without_that_evidence():
    assert choose(policy(lift_slots=False), TABLES).index is None
    assert choose(policy(), [TABLES[0], TABLES[2]]).index is None                 # no second question of it
    other = [TABLES[0], replace(TABLES[1], entry_answer="Booked: a table for 2 at 8pm."), TABLES[2]]
    assert choose(policy(), other).index is None                                  # generated answers that differ
    unknown = [replace(c, entry_answer=None) for c in TABLES]
    assert policy().choose(unknown, ["a", "a", "b"]).index is None               # stored answers not known


@pytest.mark.parametrize("answer", ["Yes.", "no", "42", "It is 7 pm.", "Bonn", "Prime."])
def test_answers_that_coincide_by_chance_lift_nothing(answer):
    assert by_chance(answer)
    found = [cand("is 7 a prime number", 0.97, answer, "is 9 a prime number"),
             cand("is 13 a prime number", 0.96, answer, "is 9 a prime number"),
             cand("what is a prime", 0.4, "A number with two divisors.", "is 9 a prime number")]
    assert choose(policy(), found).index is None


def test_only_numbers_and_names_are_lifted_and_each_needs_its_own_evidence():
    assert slots_spanned("book a table for 4", ("numbers",), ["book a table for 2"])
    assert slots_spanned("call Anna", ("names",), ["call Bob"])
    assert not slots_spanned("call Anna at 5", ("numbers", "names"), ["call Anna at 6"])    # the names are the same
    assert not slots_spanned("i can pay", ("negation",), ["i cannot pay"])
    assert not slots_spanned("book a table for 4", ("numbers",), [])
    assert not by_chance(BOOKING) and not by_chance("restaurant_reservation")
    assert not by_chance("Call 555 0100 from 9 to 5 on weekdays to book a table.")      # canned free text


def test_the_cut_and_the_margin_still_decide_after_a_lift():
    rival = [*TABLES[:2], cand("book a table for 6 at 9pm at the other place", 0.9, "Call the other place.")]
    index, decision = choose(policy(), rival)
    assert index is None and decision.reason == "too close to another answer"
    far = [cand("book a table for 4 at 7pm", 0.7, BOOKING), cand("reserve a table for 2 at 8", 0.69, BOOKING),
           TABLES[2]]
    assert choose(policy(), far).index is None


def test_the_file_form_can_switch_it_off():
    data = {"evidence": ["tuned_cosine", "margin", "logit"],
            "decision": {"thresholds": {"0.02": {"cosine": 0.8, "margin": 0.15, "lone": 1.01}},
                         "target_false_hit_rate": 0.02, "min_cosine": 0.3}}
    assert matcher_from_dict(data, np.eye(4)).lift_slots
    off = json.loads(json.dumps(data))
    off["decision"]["lift_slots"] = False
    assert not matcher_from_dict(off, np.eye(4)).lift_slots


RESERVATIONS = {
    "book a table for 4 at 7pm tonight": BOOKING,
    "reserve a table for two people at 8 on friday": BOOKING,
    "how do i report my card as lost": "Report a lost card in the app under Cards, then Lost or stolen.",
    "what time do you open on sundays": "We open at 10 am on Sundays and close at 4 pm.",
    "transfer $50 from checking to savings": "Transfers between your accounts are made under Payments.",
}


def test_through_the_real_tier_a_booking_for_another_party_gets_the_booking_answer():
    tier = evaluate.make_tier(argparse.Namespace(policy="packaged", threshold=0.9), Embedder())

    async def run() -> tuple[str | None, str | None]:
        for question, answer in RESERVATIONS.items():
            await lookups.store(tier, question, answer)
        return (await lookups.served(tier, "can you book me a table for 6 at 9pm"),
                await lookups.served(tier, "transfer $500 from checking to savings"))
    booking, transfer = asyncio.run(run())
    assert booking == BOOKING
    assert transfer is None          # one question of that answer: nothing says the amount does not matter
