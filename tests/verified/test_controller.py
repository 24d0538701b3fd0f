"""Holding a namespace under its false-hit target: the Wilson bound, tightening on bad evidence, loosening
only on much good evidence and never past the configured setting, for cosine, calibrated and trained policies."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest

from cachegate.verified.controller import TargetController
from cachegate.verified.estimate import wilson_upper
from policies.matcher import Cut, MatcherPolicy
from policies.thresholds import CosinePolicy


@dataclass
class Tier:
    policy: object


@dataclass(frozen=True)
class Calibrated:             # the shape of a calibrated (or trained) policy: cuts fitted per target
    thresholds: dict
    target: float
    namespaces: dict
    cosine_namespaces: dict


def test_wilson_upper_bound_shrinks_with_evidence_and_covers_the_rate():
    assert wilson_upper(0, 0) == 1.0
    assert wilson_upper(1, 10) > wilson_upper(10, 100) > wilson_upper(100, 1000) > 0.1
    assert 0.0 < wilson_upper(0, 200) < 0.02


def test_bad_hits_tighten_a_cosine_namespace_and_good_ones_loosen_it_back_to_its_setting():
    tier = Tier(CosinePolicy(0.85))
    controller = TargetController(tier, {}, default_target=0.05, min_evidence=20, loosen_evidence=100)
    for i in range(20):
        controller.record("faq", good=i % 4 != 0, source="shadow")          # 25% wrong
    assert tier.policy.namespaces["faq"] == pytest.approx(0.87)
    assert controller.tallies["faq"].since == 0                              # evidence restarts
    for _ in range(99):
        controller.record("faq", good=True, source="feedback")
    assert tier.policy.namespaces["faq"] == pytest.approx(0.87)              # not yet enough evidence
    controller.record("faq", good=True, source="feedback")
    assert tier.policy.namespaces["faq"] == pytest.approx(0.85)              # 0/100 wrong: bound 0.037 < 0.05
    for _ in range(300):
        controller.record("faq", good=True, source="feedback")
    assert tier.policy.namespaces["faq"] == pytest.approx(0.85)              # never looser than configured
    assert [c.after for c in controller.changes] == [pytest.approx(0.87), pytest.approx(0.85)]
    assert controller.tier.policy.threshold == 0.85                          # other namespaces untouched


def test_a_calibrated_namespace_moves_to_the_next_stricter_fitted_target():
    tier = Tier(Calibrated({0.01: 0.9, 0.02: 0.8, 0.05: 0.7}, 0.05, {}, {}))
    controller = TargetController(tier, {"bank": 0.02}, min_evidence=10)
    for _ in range(10):
        controller.record("bank", good=False, source="shadow")
    assert tier.policy.namespaces["bank"] == 0.02
    for _ in range(10):
        controller.record("bank", good=False, source="shadow")
    assert tier.policy.namespaces["bank"] == 0.01
    for _ in range(10):
        controller.record("bank", good=False, source="shadow")
    assert tier.policy.namespaces["bank"] == 0.01                            # the strictest fitted cut
    view = controller.view()["namespaces"]["bank"]
    assert view["target"] == 0.02 and view["target_false_hit_rate"] == 0.01 and view["configured"] == 0.05


def test_too_little_evidence_or_no_wrong_hit_changes_nothing():
    tier = Tier(CosinePolicy(0.9))
    controller = TargetController(tier, {}, min_evidence=20)
    for _ in range(19):
        controller.record("default", good=False, source="shadow")
    for _ in range(50):
        controller.record("quiet", good=True, source="shadow")       # bound above target, yet nothing wrong
    assert tier.policy.namespaces == {}


def test_a_drift_after_a_long_good_stretch_shows_in_the_recent_checks():
    tier = Tier(CosinePolicy(0.85))
    controller = TargetController(tier, {}, default_target=0.02, window=100, loosen_evidence=10_000)
    for _ in range(1000):
        controller.record("faq", good=True, source="shadow")
    for i in range(30):
        controller.record("faq", good=i % 5 != 0, source="shadow")          # 20% wrong, after 1,000 good
    assert tier.policy.namespaces.get("faq", 0.85) > 0.85


def test_a_matcher_namespace_tightens_past_its_strictest_fitted_cut_and_loosens_back():
    """A cache still filling serves wrong answers even at the strictest fitted target: the steps go on, each
    halving the target and adding cosine and margin, up to the ceiling; good evidence walks them back."""
    fitted = {0.01: Cut(0.78, 0.16), 0.02: Cut(0.73, 0.11)}
    tier = Tier(MatcherPolicy(np.eye(4, dtype=np.float32), fitted, 0.02))
    controller = TargetController(tier, {}, min_evidence=10, loosen_evidence=50)
    for _ in range(30):
        controller.record("support", good=False, source="shadow")
    policy = tier.policy
    assert policy.namespaces["support"] == 0.0025 and policy.target == 0.02
    assert policy.cut_for("support") == Cut(0.82, 0.2)
    assert policy.thresholds[0.005] == Cut(0.8, 0.18) and policy.cut_for("default") == fitted[0.02]
    assert [c.after for c in controller.changes] == [0.01, 0.005, 0.0025]
    for _ in range(800):                                                     # ~190 good checks a step (bound < 2%)
        controller.record("support", good=True, source="feedback")
    assert tier.policy.namespaces["support"] == 0.02                         # back to its setting, no further
    assert [c.after for c in controller.changes][3:] == [0.005, 0.01, 0.02]


def test_the_steps_past_the_strictest_cut_stop_at_the_cosine_ceiling():
    policy = MatcherPolicy(np.eye(4, dtype=np.float32), {0.01: Cut(0.97, 0.1, 0.9)}, 0.01)
    target, cut = policy.past_strictest()
    assert (target, cut) == (0.005, Cut(0.99, 0.12, 0.99))
    assert policy.with_cut(target, cut).past_strictest() is None
    tier = Tier(policy.with_cut(target, cut))
    controller = TargetController(tier, {}, min_evidence=5)
    tier.policy = replace(tier.policy, namespaces={"x": 0.005})
    for _ in range(20):
        controller.record("x", good=False, source="shadow")
    assert tier.policy.namespaces["x"] == 0.005 and not controller.changes
