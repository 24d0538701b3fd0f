"""The matcher's decision on its own (no model): the verifier's favourite servable entry is weighed against the
best rival answer, vetoes and the context gate never serve, and each namespace gets its target's cut."""
from __future__ import annotations

import numpy as np

from policies.matcher import (
    EVIDENCE,
    NO_RIVAL,
    Cuts,
    MatcherPolicy,
    best_evidence,
    matcher_from_dict,
    stage_of,
)
from policies.thresholds import Candidate


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs + (0.0,) * (4 - len(xs)), dtype=np.float32)
    return v / np.linalg.norm(v)


def policy(**kw) -> MatcherPolicy:
    # score = sigmoid(logit - rival_logit): only the margin over the best rival answer counts
    weights = np.array([1.0, -1.0, 0.0, 0.0, 0.0])
    base = {"projection": np.eye(4, dtype=np.float32), "weights": weights, "bias": 0.0,
            "thresholds": {0.02: Cuts(0.9, 0.9, 0.9), 0.1: Cuts(0.6, 0.6, 0.6)}, "target": 0.02, "min_tuned_cosine": 0.3, "verify_k": 2}
    return MatcherPolicy(**(base | kw))


def cand(query: str, cached: str, logit: float, vector=(1.0, 0.2)) -> Candidate:
    return Candidate(query, cached, 0.9, query_vector=unit(1.0, 0.1), entry_vector=unit(*vector), verified=logit)


def test_a_confident_entry_without_rival_answers_is_served():
    index, decision = policy().choose([cand("how do i reset it", "how can i reset it", 4.0)], ["a"])
    assert index == 0 and decision.hit


def test_a_close_rival_answer_keeps_the_lookup_a_miss():
    found = [cand("where is my card", "my card is yet to arrive", 3.0), cand("where is my card", "card lost", 2.5)]
    index, decision = policy().choose(found, ["arrival", "lost"])
    assert index is None and not decision.hit and decision.reason == "below the cut"


def test_entries_of_one_answer_support_each_other_instead_of_competing():
    found = [cand("where is my card", "my card is yet to arrive", 3.0), cand("where is my card", "card not here", 2.5)]
    best, evidence = best_evidence(found, ["arrival", "arrival"], [0.9, 0.8], [False, False])
    assert best == 0 and evidence.support == 2 and evidence.rival_logit == NO_RIVAL


def test_a_key_difference_is_never_served_however_sure_the_verifier_is():
    index, decision = policy().choose([cand("send $50 to Anna", "send $500 to Anna", 9.0)], ["a"])
    assert index is None and "differs" in decision.reason


def test_a_vetoed_entry_still_counts_as_a_rival():
    found = [cand("send $50 to Anna", "send $500 to Anna", 9.0), cand("send $50 to Anna", "transfer $50 to Anna", 4.0)]
    best, evidence = best_evidence(found, ["500", "50"], [0.9, 0.9], [True, False])
    assert best == 1 and evidence.rival_logit == 9.0


def test_a_namespace_target_picks_its_cut():
    lenient = policy(namespaces={"faq": 0.1})
    found = [cand("where is my card", "my card is yet to arrive", 3.0), cand("where is my card", "card lost", 2.0)]
    assert lenient.choose(found, ["arrival", "lost"], "faq").index == 0        # sigmoid(1) = 0.73 >= 0.6
    assert lenient.choose(found, ["arrival", "lost"]).index is None            # < 0.9 at the default target


def test_the_shortlist_keeps_the_closest_by_tuned_cosine_above_the_floor():
    found = [cand("q", "far", 0.0, (0.0, 1.0)), cand("q", "near", 0.0, (1.0, 0.1)), cand("q", "mid", 0.0, (1.0, 0.6))]
    assert policy().shortlist(found) == [1, 2]


def test_a_lone_candidate_without_a_verifier_score_needs_a_strict_cosine():
    lone = Candidate("how do i reset it", "how can i reset it", 0.9)
    assert not policy().decide(lone).hit


def test_the_file_form_loads_back():
    cuts = {"same_wording": 0.5, "agreed": 0.8, "lone": 0.9}
    data = {"evidence": list(EVIDENCE), "context_gate": {"min_similarity": 0.95},
            "decision": {"weights": [1, -1, 0, 0, 0], "bias": 0.0, "thresholds": {"0.02": cuts},
                         "target_false_hit_rate": 0.02, "min_tuned_cosine": 0.3, "verify_k": 2, "min_cosine": 0.3}}
    loaded = matcher_from_dict(data, np.eye(4), {"strict": 0.01})
    assert loaded.cuts_for("strict") == Cuts(0.5, 0.8, 0.9) and loaded.gate.min_similarity == 0.95
    assert loaded.verify_k == 2


def test_each_stage_faces_its_own_cut():
    assert [stage_of("same wording", 1), stage_of("other", 3), stage_of("other", 1)] == list(Cuts._fields)
    strict_alone = policy(thresholds={0.02: Cuts(0.5, 0.5, 1.0)})
    one = [cand("where is my card", "my card is yet to arrive", 3.0)]
    two = one + [cand("where is my card", "still waiting on my card", 2.0)]
    assert strict_alone.choose(one, ["arrival"]).index is None          # a lone entry never passes 1.0
    assert strict_alone.choose(two, ["arrival", "arrival"]).index == 0   # two entries of the answer agree


def test_the_same_words_always_hit():
    index, decision = policy().choose([cand("How do I reset it?", "how do i reset it", -5.0)], ["a"])
    assert index == 0 and decision.score == 1.0
