"""The tightening drill, short: near misses arrive mid-run under a loose decision; shadow checks see the
false hits the labels show, the namespace tightens, and the rate is back under its target by the end."""
from __future__ import annotations

import argparse

import pytest

from loadtests.verify_drill import DATA, add_arguments, drill

pytestmark = pytest.mark.skipif(not (DATA / "clinc150.json").exists(), reason="needs ../shared/data")


@pytest.fixture(scope="module")
def report():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return drill(parser.parse_args(["--lookups", "800", "--window", "100"]))


def test_near_misses_raise_the_false_hit_rate_past_the_target(report):
    second = [w for w in report["windows"] if w["half"] == "second"]
    assert max(w["true_false_hit_rate"] for w in second) > report["target"]


def test_shadow_checks_measure_what_the_labels_show(report):
    for w in report["windows"][1:]:
        assert w["checked_false_hit_rate"] == pytest.approx(w["true_false_hit_rate"], abs=0.02)


def test_the_namespace_tightens_and_the_rate_returns_under_the_target(report):
    assert report["changes"] and report["windows"][-1]["threshold"] > report["threshold_start"]
    assert all(c["after"] > c["before"] for c in report["changes"])
    assert report["windows"][-1]["true_false_hit_rate"] <= report["target"]
