"""Fitting the calibrated policy: cuts keep the false-hit rate within the target, the same words always hit,
key differences never do, and a fitted policy survives its file form."""
from __future__ import annotations

import json
from itertools import pairwise

import numpy as np

from policies import calibration
from policies.calibration import NEVER, Rows, best_cuts, best_threshold
from policies.signals import FEATURES
from policies.thresholds import Candidate, policy_from_dict


def test_best_threshold_is_the_lowest_cut_within_the_rate():
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    labels = np.array([True, True, True, False, False])
    cut, hits = best_threshold(scores, labels, 0.0)
    assert (round(cut, 6), hits) == (0.65, 3)
    assert best_threshold(scores, labels, 0.3)[1] == 4
    assert best_threshold(scores, np.zeros(5, bool), 0.1) == (NEVER, 0)


def test_a_steady_cut_does_not_take_a_lucky_dip_far_down():
    labels = np.array([True] * 3 + [False] * 2 + [True] * 40)      # 2 false among the first 5
    scores = np.linspace(1, 0.01, len(labels))
    assert best_threshold(scores, labels, 0.05)[1] == len(labels)   # the rate recovers further down
    assert best_threshold(scores, labels, 0.05, steady_after=4)[1] == 3     # stops above the first false


def test_same_wording_pairs_get_their_own_cut():
    rng = np.random.default_rng(0)
    scores = rng.random(400)
    kinds = np.array(["same wording"] * 200 + ["other"] * 200)
    labels = np.r_[rng.random(200) < 0.99, scores[200:] > rng.random(200) * 1.3]
    cuts = best_cuts(scores, labels, kinds, 0.05, 0.0)
    assert cuts["same_wording"] < cuts["other"] <= NEVER


def synthetic_rows(n: int = 600, seed: int = 0) -> Rows:
    rng = np.random.default_rng(seed)
    labels = rng.random(n) < 0.5
    features = rng.normal(0, 1, (n, len(FEATURES)))
    features[:, 0] = np.clip(0.8 + 0.1 * labels + rng.normal(0, 0.05, n), 0, 1)   # cosine separates them
    kinds = np.array(["other"] * n)
    return Rows(features, labels, kinds, np.ones(n, bool), np.arange(n))


def test_fit_writes_a_policy_that_loads_and_decides():
    data = json.loads(json.dumps(calibration.fit(synthetic_rows(), 0.05)))
    policy = policy_from_dict(data)
    assert set(data["thresholds"]) >= {"0.03", "0.05", "0.1"}
    assert policy.cut_for("default") == policy.thresholds[0.05]
    same = Candidate("How do I reset my password?", "how do i reset my password", 0.97)
    assert policy.decide(same).hit                                   # the same words, whatever the cut
    pin = Candidate("How do I reset my PIN?", "How do I reset my password?", 0.99)
    assert not policy.decide(pin).hit and "names" in policy.decide(pin).reason


def test_stricter_targets_never_cut_lower():
    policy = policy_from_dict(calibration.fit(synthetic_rows(seed=1), 0.05))
    cuts = [policy.thresholds[t] for t in sorted(policy.thresholds)]
    assert all(a.other >= b.other for a, b in pairwise(cuts))
