"""The packaged matcher through the real tier: paraphrases of a cached question are served, near misses are
vetoed, out-of-scope questions miss; the shipped files are small and carry their held-apart figures."""
from __future__ import annotations

import argparse
import asyncio

import pytest

from cachegate.cache.semantic.embedder import Embedder
from cachegate.commands import evaluate
from cachegate.evaluation import lookups
from policies.matcher import MatcherPolicy

CACHED = {
    "how do i report my card as lost": "lost_card",
    "i lost my credit card, what should i do": "lost_card",
    "what is the routing number for my checking account": "routing",
    "transfer $50 from checking to savings": "transfer_50",
    "how do i reset my email password": "reset_password",
}


@pytest.fixture
def tier():
    tier = evaluate.make_tier(argparse.Namespace(policy="packaged", threshold=0.9), Embedder())
    assert isinstance(tier.policy, MatcherPolicy)

    async def warm():
        for question, intent in CACHED.items():
            await lookups.store(tier, question, intent)
    asyncio.run(warm())
    return tier


def served(tier, question: str) -> str | None:
    return asyncio.run(lookups.served(tier, question))


@pytest.mark.parametrize(("question", "intent"), [
    ("how can i reset my email password", "reset_password"),
    ("i've lost my card, how do i report it", "lost_card"),
])
def test_a_paraphrase_is_served_its_answer(tier, question, intent):
    assert served(tier, question) == intent


def test_a_near_miss_that_differs_in_a_number_is_vetoed(tier):
    assert served(tier, "transfer $500 from checking to savings") is None
    found = asyncio.run(tier.lookup("chat", lookups.request_for("transfer $500 from checking to savings")))
    assert found is not None and found.hit is None


@pytest.mark.parametrize("question", ["what is the capital of france", "tell me a joke about penguins"])
def test_an_out_of_scope_question_misses(tier, question):
    assert served(tier, question) is None


def test_the_packaged_matcher_is_small_and_carries_its_fitted_figures():
    from cachegate.cache.semantic.matcher_files import packaged_folder, read_matcher
    folder = packaged_folder()
    assert sum(f.stat().st_size for f in folder.iterdir()) <= 10_000_000
    fitted = read_matcher(folder)["fitted"]["sets"]["intents (unseen domains, cross-fitted)"]
    assert fitted["hit_rate"] > 0.2 and fitted["false_hit_rate"] <= 0.02


ARRIVES = "Your new card is on its way and should arrive within five working days of the order."
ARRIVES_AGAIN = "Your new card is on its way; it should arrive within five working days of ordering."
ACTIVATE = "Cards can be activated in the app: open Settings, then Cards, then tap Activate card."


@pytest.mark.parametrize(("second_answer", "served_answer"), [(ARRIVES_AGAIN, ARRIVES), (ACTIVATE, None)])
def test_two_generated_answers_that_say_the_same_are_one_answer(second_answer, served_answer):
    """Two paraphrases cached with two generated answers: when the answers say the same they do not block each
    other; when they differ, a question between them stays a miss. (A third answer is cached too: without another
    answer in reach the matcher has no margin to read and serves only the same wording.)"""
    tier = evaluate.make_tier(argparse.Namespace(policy="packaged", threshold=0.9), Embedder())

    async def run():
        await lookups.store(tier, "when is my new card coming", ARRIVES)
        await lookups.store(tier, "when does my new card arrive", second_answer)
        await lookups.store(tier, "i lost my card", "Freeze a lost card in the app at once, then call us to block it.")
        return await lookups.served(tier, "when will my new card get here")     # tuned 0.94 and 0.91: rivals at any margin over 0.03
    assert asyncio.run(run()) == served_answer


MEMBERSHIP = {"what are the steps to cancel my membership": "cancel", "how do i pause my membership": "pause",
              "how do i update my card details": "card", "where is my parcel": "parcel"}


@pytest.mark.parametrize(("question", "answer"), [
    ("how can i cancel my membership", "cancel"),
    ("how do i terminate my membership", "cancel"),           # the lexicon's own synonym
    ("how would i step down my membership", None),            # a verb WordNet relates to no form of "cancel"
])
def test_a_verb_outside_the_lexicon_is_judged_by_wordnet(question, answer):
    assert served_from(MEMBERSHIP, question) == answer


RETURNS_AND_CARRIERS = {"how can i exchange an item that arrived damaged": "exchange",
                        "how do i contact the carrier": "contact_carrier", "where is my parcel": "parcel",
                        "any idea how to follow a complaint": "track_complaint"}


@pytest.mark.parametrize(("question", "answer"), [
    ("how do i reach the carrier", "contact_carrier"),        # one WordNet sense: "reach", "contact"
    ("any idea how to track a complaint", "track_complaint"),  # "track" and "follow" are linked
    ("how do i return an item that arrived damaged", None),    # neither verb is in the lexicon, nor related
    ("how do i mail back a broken item", None),
])
def test_two_verbs_outside_the_lexicon_are_judged_by_wordnet(question, answer):
    """Before two verbs the lexicon lacks were compared, both returns were served the exchange answer."""
    assert served_from(RETURNS_AND_CARRIERS, question) == answer


def served_from(cached: dict[str, str], question: str) -> str | None:
    """The answer a fresh packaged tier holding `cached` (question -> answer) serves to `question`."""
    tier = evaluate.make_tier(argparse.Namespace(policy="packaged", threshold=0.9), Embedder())

    async def run():
        for text, label in cached.items():
            await lookups.store(tier, text, label)
        return await lookups.served(tier, question)
    return asyncio.run(run())


RESERVATIONS_AND_TOP_UPS = {
    "cancel my dinner reservation": "cancel_reservation", "please cancel the reservation i made for dinner":
    "cancel_reservation", "my top up failed": "top_up_failed", "why did my top-up fail": "top_up_failed",
    "how do i top up my account": "top_up_howto", "i lost my credit card, what should i do": "lost_card"}


@pytest.mark.parametrize(("question", "answer"), [
    ("i don't need my dinner reservation anymore", "cancel_reservation"),    # a negated wish
    ("my top up didn't go through", "top_up_failed"),                        # a failure word says the same
    ("i can't find my credit card, what should i do", "lost_card"),
    ("i don't want to cancel my dinner reservation", None),                  # the negation reaches "cancel"
    ("my top up didn't fail", None),                                         # it undoes the failure
])
def test_a_negation_is_judged_by_what_it_negates(question, answer):
    """A veto on any negation refused all five; the first three are paraphrases of a cached question."""
    assert served_from(RESERVATIONS_AND_TOP_UPS, question) == answer
