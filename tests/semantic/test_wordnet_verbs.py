"""The WordNet verb table: base forms, which verbs it relates, the verb a question asks with, and the build that
cuts the table from WordNet's own files."""
from __future__ import annotations

import json

import pytest

from policies import wordnet_build
from policies.actions import asked_verb, unrelated_asked_verbs
from policies.wordnet_verbs import base_form, related


@pytest.mark.parametrize(("form", "lemma"), [
    ("cancel", "cancel"), ("cancelled", "cancel"), ("stepped down", "step down"), ("took", "take"),
    ("Bumping up", "bump up"), ("frobnicate", None),
])
def test_base_forms_follow_wordnets_rules(form, lemma):
    assert base_form(form) == lemma


@pytest.mark.parametrize(("a", "b", "answer"), [
    ("track", "follow", True), ("apply", "request", True), ("buy", "acquire", True),
    ("cancel", "step down", False), ("schedule", "postpone", False), ("submit", "follow", False),
    ("cancel", "frobnicate", None),
])
def test_related_reads_direct_links_both_ways(a, b, answer):
    assert related(a, b) is answer
    assert related(b, a) is answer


@pytest.mark.parametrize(("text", "verb"), [
    ("Please explain how to send back a gift I received.", "send back"),       # the last opening, two words
    ("Hi there, quick question: how would I step down my membership?", "step down"),
    ("Can you help me trace my refund?", "trace"),
    ("I want to cancel my online order - how does that work?", "cancel"),
    ("How can I get rid of my old card?", "get rid of"),                       # the lexicon's longest form
    ("My card was declined.", None),                                           # asks for nothing to do
    ("Can I still eat it after a week?", "eat"),                                # an adverb before the verb
])
def test_asked_verb_is_the_one_after_the_last_request_opening(text, verb):
    assert asked_verb(text) == verb


def test_asked_verbs_that_wordnet_does_not_relate_veto():
    assert unrelated_asked_verbs("How do I cancel my plan?", "How would I step down my plan?")
    assert unrelated_asked_verbs("How do I lodge a claim?", "How do I follow a claim?")        # neither's
    assert unrelated_asked_verbs("How do I return an item?", "How can I exchange an item?")
    assert not unrelated_asked_verbs("How do I cancel my plan?", "How do I pause my plan?")    # actions_of's
    assert not unrelated_asked_verbs("How do I cancel my plan?", "How can I get my plan?")     # too general
    assert not unrelated_asked_verbs("Would you mind repeating that?", "Would you repeat that?")


@pytest.mark.parametrize(("a", "b"), [
    ("How do I reach the carrier?", "How can I contact the carrier?"),       # one WordNet sense
    ("How do I sit out my next box?", "how to sit out my next box"),         # the same verb
    ("How do I return an item?", "How can I send back an item?"),             # an ALSO verb says its action
    ("Could you print my receipt?", "How do I print out my receipt?"),        # the same head verb
])
def test_asked_verbs_wordnet_relates_do_not_veto(a, b):
    assert not unrelated_asked_verbs(a, b)
    assert not unrelated_asked_verbs(b, a)


INDEX = """  1 a licence line
cancel v 2 1 @ 2 1 00000001 00000003
call_off v 1 1 @ 1 0 00000001
step_down v 1 0 1 0 00000002
"""
DATA = """  1 a licence line
00000001 31 v 02 cancel 0 call_off 0 001 @ 00000003 v 0000 01 + 08 00 | do away with
00000002 40 v 01 step_down 0 000 01 + 02 00 | leave office
00000003 31 v 01 cancel 1 001 ~ 00000001 v 0000 01 + 08 00 | make up for
"""


def test_build_cuts_lemmas_links_and_irregular_forms(tmp_path):
    for name, text in (("index.verb", INDEX), ("data.verb", DATA), ("verb.exc", "cancelled cancel\n")):
        (tmp_path / name).write_text(text)
    out = tmp_path / "table.json"
    assert wordnet_build.main([str(tmp_path), "--out", str(out)]) == 0
    table = json.loads(out.read_text())
    assert table["lemmas"] == {"call off": [0], "cancel": [0, 2], "step down": [1]}
    assert table["links"] == [[2], [], [0]]
    assert table["irregular"] == {"cancelled": "cancel"}


def test_shipped_table_is_whole_and_consistent():
    table = json.loads(wordnet_build.OUT.read_text())
    assert len(table["lemmas"]) > 10_000 and len(table["links"]) > 10_000
    synsets = len(table["links"])
    assert all(0 <= s < synsets for senses in table["lemmas"].values() for s in senses)
    assert all(0 <= s < synsets for linked in table["links"] for s in linked)


async def test_building_the_tier_loads_the_table_before_the_first_lookup():
    from cachegate.build_parts import build_semantic_store, build_semantic_tier
    from cachegate.settings import load_settings
    from policies import wordnet_verbs
    wordnet_verbs._table.cache_clear()
    settings = load_settings(env={})
    tier = build_semantic_tier(settings, build_semantic_store(settings))
    try:
        assert wordnet_verbs._table.cache_info().currsize == 1
    finally:
        await tier.close()
