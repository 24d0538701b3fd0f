"""Minimal pairs on the action verb (`cachegate.matcher_train.actions`): the negative says another action on the
same object, the positive the same action in other words, and nothing else of the question changes."""
import argparse
import random

import numpy as np
import pytest

from cachegate.matcher_train import actions, command
from cachegate.matcher_train import data as corpus_data
from cachegate.matcher_train.settings import TrainSettings, quick

ROWS = [("how do i cancel my subscription", "subs.cancel"), ("i want to stop paying for my plan", "subs.cancel"),
        ("please turn on login alerts", "alerts.on"), ("i need login alerts", "alerts.on"),
        ("what is my order status", "order.status"), ("where is my package", "order.status"),
        ("help me file my tax return", "taxes"), ("what's the tax deadline", "taxes")]


def action_of(text: str) -> str:
    return actions.ACTION_OF[actions.VERB.search(text).group(1).lower()]


def test_every_contrast_names_a_known_action_and_every_action_has_a_contrast():
    assert {a for group in actions.CONTRASTS for a in group} == set(actions.ACTIONS)


@pytest.mark.parametrize("seed", range(20))
def test_the_negative_swaps_only_the_verb_for_a_contrasting_action(seed):
    rng = random.Random(seed)
    text = "how do i cancel my subscription"
    out = actions.swapped(text, rng, same=False)
    assert out.startswith("how do i ") and out.endswith(" my subscription") and out != text
    new = action_of(out)
    assert new != "cancel" and any({"cancel", new} <= set(g) for g in actions.CONTRASTS)


@pytest.mark.parametrize("seed", range(20))
def test_the_positive_says_the_same_action_otherwise(seed):
    out = actions.swapped("please turn on login alerts", random.Random(seed), same=True)
    assert out != "please turn on login alerts" and out.endswith(" login alerts")
    assert action_of(out) == "enable"


def test_nouns_and_single_form_actions_give_no_swap():
    rng = random.Random(0)
    assert actions.swapped("what is my order status", rng, same=False) is None       # "order" is not in the lexicon
    assert actions.swapped("help me file my tax return", rng, same=False) is None
    assert actions.swapped("i want to reset my pin", rng, same=True) is None         # "reset" has one form
    assert actions.swapped("Please CANCEL it", rng, same=False).startswith("Please ")   # any case


def test_minimal_pairs_keep_the_intent_as_group_and_skip_questions_without_an_action():
    pairs = actions.minimal_pairs(ROWS, seed=0)
    assert {p.anchor for p in pairs} == {"how do i cancel my subscription", "please turn on login alerts"}
    for p in pairs:
        intent = dict(ROWS)[p.anchor]
        assert p.group == intent and p.negative != p.anchor and p.positive != p.anchor
        assert action_of(p.negative) != action_of(p.anchor)
    assert actions.minimal_pairs(ROWS, seed=0) == pairs                                  # seeded
    assert set(actions.texts(pairs)) == {p.positive for p in pairs} | {p.negative for p in pairs}


@pytest.mark.skipif(not (corpus_data.DEFAULT_DATA / "intents" / "clinc150.json").exists(), reason="needs ../shared/data")
def test_each_fold_projection_trains_on_no_minimal_pair_of_its_fold(tmp_path, monkeypatch):
    """`train matcher` (quick slice): the minimal pairs join the projection's triplets, and a fold's projection gets
    none made from its own domains' questions (its cut is fitted on those domains as if never seen)."""
    calls: list[list] = []

    def recorded(rows, vectors, cfg, scratch):
        assert all(t in vectors for r in rows for t in (r.anchor, r.positive, r.negative))    # all embedded
        calls.append(rows)
        return np.eye(len(next(iter(vectors.values()))), dtype=np.float32)

    monkeypatch.setattr("cachegate.matcher_train.retrieval.train_projection", recorded)
    args = argparse.Namespace(data=str(corpus_data.DEFAULT_DATA), quick=True, leave_out="", seed=0, verifier=False,
                              from_verified=None, from_curated=None, embedding_cache=None,
                              target_false_hit_rate=0.02, confidence=0.5, no_action_pairs=False, absent_share=0.0)
    command.train(quick(TrainSettings(threads=1, progress=False)), args, tmp_path)

    corpus = corpus_data.load_corpus(corpus_data.DEFAULT_DATA, corpus_data.QUICK, [], 0)
    domain_of = corpus.domain_of()
    made = actions.minimal_pairs(corpus.train, 0)
    assert made and len(calls) == len(corpus.folds) + 1
    assert set(made) <= set(calls[-1])                                  # the shipped projection reads them all
    for fold, rows in zip(corpus.folds, calls):
        mine = {p for p in made if domain_of[p.group] in fold}
        assert mine and not mine & set(rows)
        assert {p for p in made if domain_of[p.group] not in fold} <= set(rows)
