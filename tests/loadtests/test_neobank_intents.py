"""The hand-written fine-grained banking set reads as an intent set: every intent warmed with 5 questions and
looked up with 8 others, no question in both splits."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from cachegate.evaluation.intents import read_intents, warm_set

SET = Path(__file__).resolve().parents[2] / "loadtests" / "data" / "neobank_intents.json"


def test_the_neobank_set_is_a_complete_intent_set():
    data = read_intents(SET)
    warmed, asked = Counter(i for _, i in data.train), Counter(i for _, i in data.test)
    assert len(warmed) == 25 and set(warmed.values()) == {5}
    assert asked.keys() == warmed.keys() and set(asked.values()) == {8}
    assert not {t.lower() for t, _ in data.train} & {t.lower() for t, _ in data.test}
    assert len(warm_set(data.train, 5)) == 125 and data.oos_test == []
