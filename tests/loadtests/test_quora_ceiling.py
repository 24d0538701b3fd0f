"""The Quora ceiling's measures: AUC, false-hit rate at a hit rate, and label noise among same-words pairs."""
from __future__ import annotations

import numpy as np

from cachegate.cache.semantic.datasets import Pair
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
