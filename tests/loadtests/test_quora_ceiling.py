"""The Quora ceiling's measures: AUC, false-hit rate at a hit rate, label noise among same-words pairs, the audit."""
from __future__ import annotations

import numpy as np
import pytest

from cachegate.cache.semantic.datasets import Pair, read_pairs_csv
from cachegate.matcher_train.data import DEFAULT_DATA
from loadtests.quora_audit import read_audit, summary
from loadtests.quora_ceiling import curve, same_words


def test_auc_of_perfect_reversed_and_interleaved_rankings():
    labels = np.array([True, True, False, False])
    assert curve(np.array([4.0, 3, 2, 1]), labels)["auc"] == 1.0
    assert curve(np.array([1.0, 2, 3, 4]), labels)["auc"] == 0.0
    assert curve(np.array([4.0, 2, 3, 1]), labels)["auc"] == 0.75


def test_curve_reads_the_false_hit_rate_where_each_hit_rate_is_reached():
    # 200 pairs, 100 duplicates: the best 10 right, then one wrong in every two
    labels = np.array([True] * 10 + [False, True] * 90 + [False] * 10)
    scores = len(labels) - np.arange(len(labels), dtype=float)
    c = curve(scores, labels)
    assert c["false_hit_rate_at_hit_rate"]["0.05"] == 0.0 and c["false_hit_rate_at_hit_rate"]["0.10"] == 0.0
    assert c["false_hit_rate_at_hit_rate"]["0.20"] == round(10 / 30, 4)     # 20 right of the first 30
    assert c["hit_rate_at_2pct"] == 0.1 and c["wrong_in_best_100"] == 45


def test_same_words_counts_identical_questions_labelled_non_duplicates():
    pairs = [Pair("What is life ?", "what is life?", False), Pair("How do I swim?", "How do I swim", True),
             Pair("How do I swim?", "How can I swim?", False)]
    s = same_words(pairs)
    assert (s["pairs"], s["labelled_non_duplicate"]) == (2, 1)
    assert s["examples"] == [["What is life ?", "what is life?"]]


def test_audit_corrects_the_false_hits_it_read_and_estimates_the_noise_floor():
    # 20 pairs, 10 duplicates, right and wrong alternating: 30% found after the best 5 (2 of them wrong)
    labels = np.array([True, False] * 10)
    scores = len(labels) - np.arange(len(labels), dtype=float)
    verdicts = {1: "duplicate", 3: "different", 5: "duplicate"}       # 5: not served at 30%
    a = summary(verdicts, scores, labels)
    assert (a["served"], a["labelled_duplicates"], a["labelled_false_hits"]) == (5, 3, 2)
    assert a["audited_in_served"] == 2 and a["verdicts"] == {"duplicate": 1, "unclear": 0, "different": 1}
    # half the 2 false hits are duplicates: 1 of 5 served wrong; 1 of the 4 true duplicates labelled otherwise
    assert a["unclear_as_duplicates"] == a["duplicates_only"]
    assert a["duplicates_only"] == {"audited_false_hit_rate": 0.2, "noise_floor": 0.25}


def test_the_shipped_audit_still_matches_qqp_dev():
    path = DEFAULT_DATA / "semantic" / "qqp_dev.csv"
    if not path.exists():
        pytest.skip("needs ../shared/data")
    pairs = read_pairs_csv(path)
    verdicts = read_audit(pairs)
    assert len(verdicts) == 100 and not any(pairs[row].duplicate for row in verdicts)
    moved = [Pair(p.a + "?", p.b, p.duplicate) for p in pairs]
    with pytest.raises(ValueError, match="not the pairs audited"):
        read_audit(moved)
