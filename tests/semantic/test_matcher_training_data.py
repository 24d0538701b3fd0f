"""What the matcher trains on: batches free of same-intent rows, Quora pairs held apart by question, mined hard
negatives of another intent, and calibration domains chosen where intents crowd together."""
from __future__ import annotations

import numpy as np

from cachegate.matcher_train.data import split_qqp, typical_domains
from cachegate.matcher_train.pairs import DistinctGroupBatches, nearest_others, verifier_pairs
from cachegate.semantic.datasets import Pair


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


def test_calibration_domains_are_of_median_confusability():
    rng = np.random.default_rng(1)
    rows, vectors, domain_of = [], {}, {}
    for domain, spread in (("tidy", 0.02), ("typical", 0.5), ("crowded", 3.0)):
        for intent in range(3):
            centre = rng.normal(size=8)
            domain_of[f"{domain}{intent}"] = domain
            for k in range(6):
                text = f"{domain}{intent}-{k}"
                rows.append((text, f"{domain}{intent}"))
                v = centre + rng.normal(scale=spread, size=8)
                vectors[text] = v / np.linalg.norm(v)
    assert typical_domains(rows, vectors, domain_of, 1) == ["typical"]
