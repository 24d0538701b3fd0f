"""The workloads are what issue 8 asks for: 300+ intents in 10+ distinct paraphrases, Zipf popularity,
about a fifth of support sessions multi-turn, short repeated code prompts, rarely repeating mixed chat,
all reproducible from a seed."""
from __future__ import annotations

import itertools
import re
from collections import Counter

import numpy as np
import pytest

from loadtests.workloads import build, sessions
from loadtests.workloads.support_phrasing import FOLLOW_UPS, SYSTEM_PROMPT


@pytest.fixture(scope="module")
def support():
    return build("customer-service", seed=0)


def draw(workload, n, seed=1):
    return list(itertools.islice(sessions(workload, seed), n))


def words(text):
    return frozenset(re.findall(r"[a-z0-9'-]+", text.lower()))


def test_customer_service_has_300_intents_each_in_10_distinct_paraphrases(support):
    assert len(support.intents) >= 300
    assert len({i.id for i in support.intents}) == len(support.intents)
    for intent in support.intents:
        assert len(set(intent.paraphrases)) >= 10, intent.id
        assert len({words(p) for p in intent.paraphrases}) == len(intent.paraphrases), intent.id


def test_no_paraphrase_is_shared_by_two_intents(support):
    owners = Counter(p.lower() for i in support.intents for p in i.paraphrases)
    assert max(owners.values()) == 1


def test_every_intent_knows_its_reference_answer(support):
    assert all(i.answer and "{" not in i.answer for i in support.intents)


def test_intent_popularity_follows_zipf(support):
    rank = {intent.id: k for k, intent in enumerate(support.intents)}
    counts = Counter(rank[s.turns[0].label] for s in draw(support, 30000))
    ranks = np.arange(1, 41)
    freqs = np.array([counts[k - 1] for k in ranks], dtype=float)
    slope = np.polyfit(np.log(ranks), np.log(freqs), 1)[0]
    assert -1.35 < slope < -0.85
    assert counts[0] / 30000 == pytest.approx(support.zipf.probability(0), rel=0.1)


def test_paraphrase_is_drawn_uniformly(support):
    top = support.intents[0]
    asked = Counter(s.turns[0].text for s in draw(support, 20000) if s.turns[0].label == top.id)
    assert set(asked) == set(top.paraphrases)
    assert max(asked.values()) < 2 * min(asked.values())


def test_about_a_fifth_of_support_sessions_go_on_with_follow_ups(support):
    drawn = draw(support, 5000)
    share = sum(s.multi_turn for s in drawn) / len(drawn)
    assert 0.17 < share < 0.23
    phrasings = {text: kind for kind, texts in FOLLOW_UPS.items() for text in texts}
    for s in drawn:
        for turn in s.turns[1:]:
            assert turn.label == f"{s.turns[0].label}|{phrasings[turn.text]}"


def test_support_sessions_share_the_persona_system_prompt(support):
    assert {s.system for s in draw(support, 500)} == {SYSTEM_PROMPT}
    assert "support" in SYSTEM_PROMPT


@pytest.mark.parametrize("name", ["customer-service", "code-completion", "mixed"])
def test_a_seed_reproduces_the_same_sessions(name):
    first, again = draw(build(name, seed=3), 200, seed=7), draw(build(name, seed=3), 200, seed=7)
    assert first == again
    assert draw(build(name, seed=3), 200, seed=8) != first


def test_code_completion_prompts_are_short_repeated_and_bounded():
    work = build("code-completion")
    drawn = draw(work, 2000)
    assert {s.endpoint for s in drawn} == {"completions"}
    assert all(s.params["max_tokens"] < 200 and s.params["temperature"] == 0 for s in drawn)
    assert max(len(s.turns[0].text) for s in drawn) < 200
    top10 = sum(n for _, n in Counter(s.turns[0].text for s in drawn).most_common(10))
    assert top10 / len(drawn) > 0.3
    assert work.budget_ms == 200


def test_mixed_chat_rarely_repeats():
    drawn = draw(build("mixed"), 300)
    distinct = {(s.system, s.params["temperature"], s.turns[0].text) for s in drawn}
    assert len(distinct) / len(drawn) > 0.7
    assert len(distinct) < len(drawn)                    # but some questions do come back



def test_paraphrase_pairs_are_balanced_and_labelled_by_intent(support, tmp_path):
    from loadtests.workloads.pairs import pairs, write
    owner = {p: i.id for i in support.intents for p in i.paraphrases}
    rows = list(pairs())
    assert sum(label for _, _, label in rows) * 2 == len(rows) == 6 * len(support.intents)
    assert all((owner[a] == owner[b]) == bool(label) and a != b for a, b, label in rows)
    assert write(str(tmp_path / "pairs.csv")) == len(rows)
    assert (tmp_path / "pairs.csv").read_text().splitlines()[0] == "question1,question2,is_duplicate"
