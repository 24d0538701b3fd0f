"""What the matcher trains on: batches free of same-intent rows, Quora pairs held apart by question, mined hard
negatives of another intent, domains held out in folds, and the cut fitted on what they give."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from cachegate.cache.semantic.datasets import Pair
from cachegate.matcher_train.data import pair_folds, split_qqp
from cachegate.matcher_train.fitting import fit_lone, fit_rivalled
from cachegate.matcher_train.pairs import DistinctGroupBatches, nearest_others, verifier_pairs
from cachegate.matcher_train.simulate import Lookups
from policies.calibration import z_for
from policies.matcher import Cut


def test_batches_never_hold_two_rows_of_one_group_and_cover_every_row():
    groups = [f"intent{i % 7}" for i in range(70)] + [f"qqp:{i}" for i in range(30)]
    sampler = DistinctGroupBatches(groups, 8, seed=0)
    batches = sampler.batches()
    assert sorted(r for b in batches for r in b) == list(range(100))
    assert all(len({groups[r] for r in b}) == len(b) <= 8 for b in batches)
    sampler.set_epoch(1)
    assert sampler.batches() != batches                      # reshuffled every epoch


def test_quora_pairs_sharing_a_question_stay_on_one_side():
    pairs = [Pair(f"q{i}", f"q{i + 1}", i % 2 == 0) for i in range(0, 400, 2)] + [Pair("q0", "q999", False)]
    train, held = split_qqp(pairs, seed=1)
    assert held and train and len(train) + len(held) == len(pairs)
    assert not {t for p in train for t in (p.a, p.b)} & {t for p in held for t in (p.a, p.b)}


def vectors_for(rows):
    rng = np.random.default_rng(0)
    centres = {i: rng.normal(size=16) for _, i in rows}
    out = {}
    for t, i in rows:
        v = centres[i] + rng.normal(scale=0.1, size=16)
        out[t] = v / np.linalg.norm(v)
    return out


def test_hard_negatives_are_the_nearest_questions_of_another_intent():
    rows = [(f"a{k}", "a") for k in range(5)] + [(f"b{k}", "b") for k in range(5)] + [(f"c{k}", "c") for k in range(5)]
    near = nearest_others(rows, vectors_for(rows), 2)
    assert all(len(n) == 2 and not any(x[0] == t[0] for x in n) for n, t in zip(near, rows))
    pairs = verifier_pairs(rows, [Pair("x", "y", True)], vectors_for(rows), {"a": "d", "b": "d", "c": "e"}, seed=0)
    labelled = {(p.a, p.b): p.label for p in pairs} | {(p.b, p.a): p.label for p in pairs}
    assert all(label == float(a[0] == b[0]) for (a, b), label in labelled.items() if a != "x" and a != "y")


def test_domains_are_held_out_in_pairs_and_an_odd_one_joins_the_last_fold():
    assert pair_folds(["a", "b", "c", "d"]) == [["a", "b"], ["c", "d"]]
    assert pair_folds(["a", "b", "c", "d", "e"]) == [["a", "b"], ["c", "d", "e"]]


def lookups(tuned, margin, rivalled, right) -> Lookups:
    n = len(tuned)
    return Lookups("t", np.array(tuned, float), np.array(margin, float), np.array(rivalled, bool), np.zeros(n, bool),
                   np.zeros(n, bool), np.array(right, bool), np.ones(n, bool), [""] * n, [""] * n)


def test_the_fitted_cut_serves_the_most_while_its_bound_holds():
    # 300 clear hits (wide margin) and 30 wrong ones that are close but sit between two answers
    s = lookups([0.9] * 300 + [0.95] * 30, [0.3] * 300 + [0.02] * 30, [True] * 330, [True] * 300 + [False] * 30)
    cosine, margin, logit = fit_rivalled([s], 0.02, z_for(0.9))
    served = s.served(Cut(cosine, margin, 1.01))
    assert served[:300].all() and not served[300:].any()       # the margin, not the cosine, tells them apart
    assert logit is None                                        # lookups no verifier scored: no floor
    assert fit_rivalled([lookups([0.9], [0.3], [True], [False])], 0.02, z_for(0.9)) == (1.01, 1.01, None)  # never


def test_a_verifier_floor_is_fitted_when_it_serves_more_within_the_bound():
    # the wrong lookups are as close and as clear of a rival as the right ones: only the verifier tells them apart
    s = replace(lookups([0.9] * 330, [0.3] * 330, [True] * 330, [True] * 300 + [False] * 30),
                logit=np.array([3.0] * 300 + [-2.0] * 30))
    cosine, margin, logit = fit_rivalled([s], 0.02, z_for(0.9))
    assert logit is not None and -2.0 < logit <= 3.0
    served = s.served(Cut(cosine, margin, 1.01, logit))
    assert served[:300].all() and not served[300:].any()
    assert fit_lone([replace(s, rivalled=np.zeros(330, bool))], 0.02, z_for(0.9), logit) <= 0.9   # lone, behind it


def test_the_lone_cut_comes_from_lookups_without_a_rival():
    lone = lookups([0.99] * 200 + [0.8] * 50, [0.99] * 200 + [0.8] * 50, [False] * 250, [True] * 200 + [False] * 50)
    assert 0.8 < fit_lone([lone], 0.02, z_for(0.9)) <= 0.99
