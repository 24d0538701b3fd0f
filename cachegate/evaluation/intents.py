"""Intent mode of `cachegate eval semantic`: a cache warmed with K questions per intent (the answer names the
intent), then every `test` and `oos_test` question looked up through the real tier. A served answer of another
intent is a false hit; so is any answer served to an out-of-scope question.

`coverage` below 1 warms only a seeded share of the intents, as a cache that is still filling holds only the
questions asked so far: the test questions of the intents left out are looked up too (`uncached`), and any answer
served to them is wrong. A cut fitted with every intent cached reads its margin against the right intent's
entries; without them the closest wrong intent may pass it.
"""
from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass
from pathlib import Path

from cachegate.evaluation.lookups import served, store

OUT_OF_SCOPE = "oos"
UNCACHED = "\x00uncached"    # the label of a test question whose intent was not warmed: no cached answer is right
CONCURRENT = 16     # lookups in flight at once, so the verifier batches across them as under load


@dataclass(frozen=True)
class IntentSet:
    train: list[tuple[str, str]]
    test: list[tuple[str, str]]
    oos_test: list[str]


def read_intents(path: str | Path, domains: list[str] | None = None, domain_file: str | Path | None = None) -> IntentSet:
    """CLINC-style JSON `{"train", "test", "oos_test"?: [[text, intent], ...]}`, optionally kept to the intents
    of some domains (a `{domain: [intent, ...]}` file; by default `*domains.json` beside the intents file)."""
    data = json.loads(Path(path).read_text())
    keep = intents_of(domains, domain_file or default_domain_file(Path(path))) if domains else None

    def rows(split: str) -> list[tuple[str, str]]:
        return [(str(t).strip(), str(i)) for t, i in data.get(split, []) if str(t).strip() and i != OUT_OF_SCOPE
                and (keep is None or i in keep)]
    return IntentSet(rows("train"), rows("test"), [str(t).strip() for t, _ in data.get("oos_test", [])])


def default_domain_file(path: Path) -> Path:
    found = sorted(path.parent.glob("*domains.json"))
    if not found:
        raise SystemExit(f"--domains needs --domain-file: no *domains.json beside {path}")
    return found[0]


def intents_of(domains: list[str], domain_file: str | Path) -> set[str]:
    table = json.loads(Path(domain_file).read_text())
    unknown = [d for d in domains if d not in table]
    if unknown:
        raise SystemExit(f"unknown domains {unknown}; {domain_file} has {sorted(table)}")
    return {i for d in domains for i in table[d]}


def warm_set(train: list[tuple[str, str]], per_intent: int, seed: int = 0) -> list[tuple[str, str]]:
    """K questions of each intent (all of an intent that has fewer), drawn with `seed`."""
    by_intent: dict[str, list[str]] = {}
    for text, intent in train:
        by_intent.setdefault(intent, []).append(text)
    rng = random.Random(seed)
    return [(t, i) for i in sorted(by_intent)
            for t in rng.sample(by_intent[i], min(per_intent, len(by_intent[i])))]


def cached_intents(intents: set[str], coverage: float, seed: int = 0) -> set[str]:
    """A seeded share `coverage` of the intents (at least one), the ones a filling cache has seen."""
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"coverage must be in (0, 1], not {coverage}")
    ordered = sorted(intents)
    return set(random.Random(seed).sample(ordered, max(1, round(coverage * len(ordered))))) if ordered else set()


async def intent_mode(tier, data: IntentSet, per_intent: int = 5, seed: int = 0, with_oos: bool = True,
                      coverage: float = 1.0) -> dict:
    kept = cached_intents({i for _, i in data.train}, coverage, seed)
    warm = [(t, i) for t, i in warm_set(data.train, per_intent, seed) if i in kept]
    for text, intent in warm:
        await store(tier, text, intent)
    asked = [(t, i if i in kept else UNCACHED) for t, i in data.test]
    asked += [(t, OUT_OF_SCOPE) for t in data.oos_test] if with_oos else []
    answers = await look_up_all(tier, [t for t, _ in asked], served)
    return tally(asked, answers) | {"intents": len({i for _, i in warm}), "per_intent": per_intent,
                                    "coverage": coverage, "entries": len(tier.catalog)}


async def look_up_all(tier, questions: list[str], served) -> list[str | None]:
    """Answers in question order, CONCURRENT lookups in flight at a time."""
    answers: list[str | None] = [None] * len(questions)
    limit = asyncio.Semaphore(CONCURRENT)

    async def one(i: int) -> None:
        async with limit:
            answers[i] = await served(tier, questions[i])
    await asyncio.gather(*(one(i) for i in range(len(questions))))
    return answers


def tally(asked: list[tuple[str, str]], answers: list[str | None]) -> dict:
    """hit_rate = served / lookups; false_hit_rate = wrong / served (wrong: another intent, or anything served to an
    out-of-scope question or one of an intent not cached). `uncached` appears when some intents were not warmed."""
    def part(rows: list[int]) -> dict:
        hits = [r for r in rows if answers[r] is not None]
        wrong = [r for r in hits if answers[r] != asked[r][1] or asked[r][1] in (OUT_OF_SCOPE, UNCACHED)]
        return {"lookups": len(rows), "served": len(hits), "wrong": len(wrong),
                "hit_rate": round(len(hits) / max(1, len(rows)), 4),
                "false_hit_rate": round(len(wrong) / max(1, len(hits)), 4)}
    everything = list(range(len(asked)))
    outside = [r for r in everything if asked[r][1] == OUT_OF_SCOPE]
    uncached = [r for r in everything if asked[r][1] == UNCACHED]
    inside = [r for r in everything if asked[r][1] not in (OUT_OF_SCOPE, UNCACHED)]
    return part(everything) | {"in_scope": part(inside), "out_of_scope": part(outside)} | \
        ({"uncached": part(uncached)} if uncached else {})
