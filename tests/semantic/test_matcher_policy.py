"""The matcher's decision on its own (no model): the closest servable entry is served when it is close enough and
clearly closer than any entry of another answer; vetoes and the context gate never serve; a verifier gate, when
the matcher has one, vetoes; each namespace gets its target's cut."""
from __future__ import annotations

import numpy as np

from policies.matcher import EVIDENCE, Cut, MatcherPolicy, best_evidence, matcher_from_dict, merge_answers
from policies.thresholds import Candidate


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs + (0.0,) * (4 - len(xs)), dtype=np.float32)
    return v / np.linalg.norm(v)


QUERY = unit(1.0, 0.0)


def policy(**kw) -> MatcherPolicy:
    base = {"projection": np.eye(4, dtype=np.float32), "thresholds": {0.02: Cut(0.8, 0.15, 0.85), 0.1: Cut(0.6, 0.05, 0.7)},
            "target": 0.02}
    return MatcherPolicy(**(base | kw))


def cand(query: str, cached: str, cosine: float, logit: float | None = None) -> Candidate:
    """A candidate whose tuned cosine with QUERY is `cosine` (the projection is the identity)."""
    entry = unit(cosine, float(np.sqrt(max(0.0, 1 - cosine * cosine))))
    return Candidate(query, cached, cosine, query_vector=QUERY, entry_vector=entry, verified=logit)


def test_a_close_entry_without_rival_answers_is_served():
    index, decision = policy().choose([cand("how do i reset it", "how can i reset it", 0.9)], ["a"])
    assert index == 0 and decision.hit and abs(decision.score - 0.9) < 1e-4


def test_an_entry_below_the_cut_is_a_miss():
    index, decision = policy().choose([cand("how do i reset it", "how do i reset the router", 0.7)], ["a"])
    assert index is None and decision.reason == "below the cut"


def test_without_a_rival_the_lone_cut_decides():
    assert not policy().choose([cand("how do i fix it", "how do i repair it", 0.83)], ["a"]).decision.hit
    with_rival = [cand("how do i fix it", "how do i repair it", 0.83), cand("how do i fix it", "pay", 0.3)]
    assert policy().choose(with_rival, ["a", "b"]).index == 0       # a clear margin over another answer


def test_a_close_rival_answer_keeps_the_lookup_a_miss():
    found = [cand("where is my card", "my card is yet to arrive", 0.9), cand("where is my card", "card lost", 0.85)]
    index, decision = policy().choose(found, ["arrival", "lost"])
    assert index is None and decision.reason == "too close to another answer"


def test_entries_of_one_answer_do_not_compete():
    found = [cand("where is my card", "my card is yet to arrive", 0.9),
             cand("where is my card", "card not here", 0.88), cand("where is my card", "card lost", 0.6)]
    evidence = best_evidence([0.9, 0.88, 0.6], ["arrival", "arrival", "lost"], [False] * 3)
    assert evidence.index == 0 and abs(evidence.margin - 0.3) < 1e-9
    assert policy().choose(found, ["arrival", "arrival", "lost"]).index == 0
    assert best_evidence([0.9], ["a"], [False]).rival is None


def test_a_key_difference_is_never_served_and_still_counts_as_a_rival():
    index, decision = policy().choose([cand("send $50 to Anna", "send $500 to Anna", 0.99)], ["a"])
    assert index is None and "differs" in decision.reason
    evidence = best_evidence([0.99, 0.9], ["500", "50"], [True, False])
    assert evidence.index == 1 and evidence.rival == 0.99


def test_a_namespace_target_picks_its_cut():
    lenient = policy(namespaces={"faq": 0.1})
    found = [cand("where is my card", "my card is yet to arrive", 0.9), cand("where is my card", "card lost", 0.8)]
    assert lenient.choose(found, ["arrival", "lost"], "faq").index == 0       # margin 0.1 >= 0.05
    assert lenient.choose(found, ["arrival", "lost"]).index is None           # < 0.15 at the default target


def test_the_verifier_gate_scores_only_the_entry_about_to_be_served_and_can_veto_it():
    gated = policy(thresholds={0.02: Cut(0.8, 0.15, 0.85, logit=1.0)})
    found = [cand("q one", "far", 0.3), cand("q one", "near", 0.95)]
    assert gated.uses_verifier and gated.shortlist(found, ["a", "b"]) == [1]
    assert gated.shortlist([cand("q one", "far", 0.5)], ["a"]) == []          # a miss by cosine: nothing to score
    assert not policy().shortlist(found, ["a", "b"])                            # no gate: never scored
    yes = [found[0], cand("q one", "near", 0.95, logit=2.0)]
    no = [found[0], cand("q one", "near", 0.95, logit=-1.0)]
    assert gated.choose(yes, ["a", "b"]).index == 1
    assert gated.choose(no, ["a", "b"]).decision.reason == "the verifier disagrees"


def test_a_gated_decision_without_a_logit_needs_a_strict_cosine():
    gated = policy(thresholds={0.02: Cut(0.8, 0.15, 0.85, logit=1.0)})
    assert not gated.decide(cand("how do i reset it", "how can i reset it", 0.9)).hit


def test_the_file_form_loads_back():
    data = {"evidence": list(EVIDENCE), "context_gate": {"min_similarity": 0.95},
            "decision": {"thresholds": {"0.02": {"cosine": 0.7, "margin": 0.2, "lone": 0.9, "logit": None},
                                        "0.1": {"cosine": 0.6, "margin": 0.1, "lone": 0.8, "logit": -1.5}},
                         "target_false_hit_rate": 0.02, "min_cosine": 0.3}}
    loaded = matcher_from_dict(data, np.eye(4), {"loose": 0.1})
    assert loaded.cut_for("default") == Cut(0.7, 0.2, 0.9) and loaded.cut_for("loose") == Cut(0.6, 0.1, 0.8, -1.5)
    assert loaded.gate.min_similarity == 0.95 and loaded.uses_verifier


def test_the_same_words_always_hit():
    found = [cand("How do I reset it?", "how do i reset it", 0.99), cand("How do I reset it?", "how to reset it", 0.98)]
    index, decision = policy().choose(found, ["a", "b"])        # a rival this close would keep any other a miss
    assert index == 0 and decision.score == 1.0


def test_the_same_wording_needs_only_the_cosine():
    alone = [cand("How can I reset my email password?", "How do I reset my email password?", 0.85)]
    assert policy().choose(alone, ["a"]).index == 0                   # no rival, yet served
    assert policy().choose([cand("how can i reset it", "how do i reset it", 0.7)], ["a"]).index is None


LONG_A = "Your new card is on its way and should arrive within five working days of the order."
LONG_B = "A replacement card usually arrives within five working days after you order it."


def test_free_text_answers_that_block_a_hit_are_contenders_and_labels_are_not():
    found = [cand("where is my card", "my card is yet to arrive", 0.9), cand("where is my card", "card not here", 0.85)]
    assert policy().contenders(found, [LONG_A, LONG_B]) == [0, 1]
    assert policy().contenders(found, ["card_arrival", "card_lost"]) == []     # short answers must be equal
    far = [found[0], cand("where is my card", "what is my balance", 0.5)]
    assert policy().contenders(far, [LONG_A, LONG_B]) == []                    # the margin holds anyway


def test_answers_that_say_the_same_merge_and_the_hit_is_served():
    found = [cand("where is my card", "my card is yet to arrive", 0.9), cand("where is my card", "card not here", 0.85)]
    same = np.array([[1.0, 0.0], [0.95, 0.31]])
    keys = merge_answers([LONG_A, LONG_B], [0, 1], same, 0.9)
    assert keys == [LONG_A, LONG_A] and policy().choose(found, keys).index == 0
    different = np.array([[1.0, 0.0], [0.5, 0.87]])
    keys = merge_answers([LONG_A, LONG_B], [0, 1], different, 0.9)
    assert keys == [LONG_A, LONG_B] and policy().choose(found, keys).index is None


def test_a_lookups_tuned_cosines_are_worked_out_once_per_projection():
    from cachegate.cache.semantic.lookup import TunedCosines
    found = [cand("where is my card", "where is my new card", 0.9), cand("where is my card", "card lost", 0.7)]
    counted = []

    class Counting(MatcherPolicy):
        def tuned_cosines(self, candidates):
            counted.append(self.projection)
            return super().tuned_cosines(candidates)
    first = Counting(**{k: getattr(policy(), k) for k in ("projection", "thresholds", "target")})
    tuned = TunedCosines(found)
    a, b = tuned.of(first), tuned.of(first.with_targets({"faq": 0.1}))       # same projection: computed once
    assert a is b and len(counted) == 1 and np.allclose(a, [0.9, 0.7])
    swapped = Counting(projection=np.diag([1.0, -1.0, 1.0, 1.0]).astype(np.float32), thresholds=first.thresholds,
                       target=0.02)
    assert np.allclose(tuned.of(swapped), [0.9, 0.7]) and len(counted) == 2       # another projection: its own
    assert first.choose(found, ["a", "b"], tuned=a) == first.choose(found, ["a", "b"])
