"""The customer-service bot workload: 300+ FAQ intents (object x action across nine domains, plus
reported problems), each asked in 12 paraphrases that differ in frame and synonyms; intents drawn with
Zipf popularity, a paraphrase uniformly, and about 20% of sessions going on with context-dependent follow-ups."""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import ClassVar

from loadtests.workloads.base import Session, Turn
from loadtests.workloads.support_objects import DOMAINS
from loadtests.workloads.support_phrasing import (
    ACTIONS,
    FOLLOW_UPS,
    HOWTO_FRAMES,
    PROBLEM_FRAMES,
    SYSTEM_PROMPT,
    with_article,
)
from loadtests.workloads.support_problems import PROBLEMS
from loadtests.workloads.zipf import Zipf

PLACES = {"account": "Account > Profile", "billing": "Account > Payments", "shipping": "Orders > Delivery",
          "returns": "Orders > Returns", "orders": "Orders", "products": "the product page",
          "subscriptions": "Account > Membership", "security": "Account > Security",
          "store-info": "the Stores page"}


@dataclass(frozen=True)
class Intent:
    id: str
    domain: str
    paraphrases: tuple[str, ...]
    answer: str          # the reference answer a correct bot gives


class CustomerService:
    name = "customer-service"
    budget_ms = None
    reference: ClassVar[dict] = {"source": "a bank's three-tier cache (reported)", "exact_hit_rate": 0.38,
                 "semantic_hit_rate": 0.22, "hit_rate": 0.60, "p99_ms_below": 800}

    def __init__(self, seed: int = 0, paraphrases: int = 12, s: float = 1.1, multi_turn_share: float = 0.2,
                 max_tokens: int = 96) -> None:
        rng = random.Random(seed)
        intents = howto_intents(rng, paraphrases) + problem_intents(rng, paraphrases)
        rng.shuffle(intents)                       # popularity rank independent of domain
        self.intents = intents
        self.zipf = Zipf(len(intents), s)
        self.multi_turn_share = multi_turn_share
        self.params = {"max_tokens": max_tokens, "temperature": 0}

    def session(self, rng: random.Random) -> Session:
        intent = self.intents[self.zipf.draw(rng)]
        turns = [Turn(rng.choice(intent.paraphrases), intent.id)]
        if rng.random() < self.multi_turn_share:
            kinds = rng.sample(sorted(FOLLOW_UPS), 1 if rng.random() < 0.7 else 2)
            turns += [Turn(rng.choice(FOLLOW_UPS[k]), f"{intent.id}|{k}") for k in kinds]
        return Session(tuple(turns), "chat", SYSTEM_PROMPT, dict(self.params))


def howto_intents(rng: random.Random, n: int) -> list[Intent]:
    out = []
    for domain, objects in DOMAINS.items():
        for synonyms, article, actions in objects:
            nouns = synonyms.split("|")
            for action in actions.split():
                verbs, action_article = ACTIONS[action]
                use = article if article == "" else (action_article or article)
                fills = [f"{v} {with_article(use, noun)}" for v in verbs.split("|") for noun in nouns]
                texts = spread(HOWTO_FRAMES, fills, n, rng, lambda f, x: f.format(a=x))
                answer = f"To {your(fills[0])}, open {PLACES[domain]} on the website or in the app and follow the steps."
                out.append(Intent(f"{domain}.{action}.{slug(nouns[0])}", domain, texts, answer))
    return out


def problem_intents(rng: random.Random, n: int) -> list[Intent]:
    out = []
    for domain, problems in PROBLEMS.items():
        for key, statements in problems.items():
            texts = spread(PROBLEM_FRAMES, list(statements), n, rng,
                           lambda f, x: capitalize_sentences(f.format(p=x)))
            answer = f"Sorry that {statements[0]}; please contact us through {PLACES[domain]} and we will fix it."
            out.append(Intent(f"{domain}.problem.{key}", domain, texts, answer))
    return out


def spread(frames: tuple[str, ...], fills: list[str], n: int, rng: random.Random, render) -> tuple[str, ...]:
    """n paraphrases, each in a different frame, cycling through the fills in a shuffled order."""
    assert len(frames) >= n, f"{len(frames)} frames cannot give {n} distinct paraphrases"
    frames, fills = rng.sample(frames, n), rng.sample(fills, len(fills))
    return tuple(render(frame, fills[i % len(fills)]) for i, frame in enumerate(frames))


def your(text: str) -> str:
    return re.sub(r"\bmy\b", "your", text)


def capitalize_sentences(text: str) -> str:
    return re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
