"""Stop strings over streamed text: cut at the first stop, hold back what might become one."""
from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.stop_checker import StopChecker


def stream(stops, deltas):
    checker = StopChecker(stops)
    shown = [checker.feed(d) for d in deltas]
    return shown, checker


def test_stop_string_split_across_deltas_is_cut_and_never_shown():
    shown, checker = stream(["o w"], ["Hel", "lo", " ", "wor", "ld"])
    assert "".join(shown) == "Hell"
    assert checker.stopped
    assert shown == ["Hel", "l", "", "", ""]   # "o", then "o ", held back: they could start "o w"


def test_held_back_text_is_released_when_it_stops_matching():
    shown, checker = stream(["STOP"], ["ab S", "T", "x"])
    assert shown == ["ab ", "", "STx"]
    assert not checker.stopped


def test_flush_releases_text_held_back_at_the_end():
    shown, checker = stream(["</end>"], ["answer </e"])
    assert shown == ["answer "]
    assert checker.flush() == "</e"


def test_earliest_of_several_stops_wins():
    shown, _ = stream(["world", "lo"], ["hello world"])
    assert shown == ["hel"]


def test_stop_at_the_very_start_shows_nothing():
    shown, checker = stream(["\n"], ["\nrest"])
    assert shown == [""] and checker.stopped and checker.flush() == ""


def test_no_stops_passes_everything_through():
    shown, checker = stream([], ["a", "b"])
    assert shown == ["a", "b"] and checker.flush() == ""


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="abc \n", max_size=40), stop=st.text(alphabet="abc \n", min_size=1, max_size=4),
       cuts=st.lists(st.integers(0, 40), max_size=8))
def test_any_split_shows_exactly_the_text_before_the_first_stop(text, stop, cuts):
    bounds = sorted({0, len(text), *[c for c in cuts if c <= len(text)]})
    deltas = [text[a:b] for a, b in itertools.pairwise(bounds)]
    shown, checker = stream([stop], deltas)
    out = "".join(shown) + checker.flush()
    expected = text[: text.find(stop)] if stop in text else text
    assert out == expected
    assert checker.stopped == (stop in text)
    for i in range(len(shown)):                     # no prefix of the stream ever contains the stop
        assert stop not in "".join(shown[: i + 1])
