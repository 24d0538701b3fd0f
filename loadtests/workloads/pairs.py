"""Labelled paraphrase pairs from the customer-service workload, for `cachegate eval semantic --pairs`:
an intent's first paraphrase against three of its others (duplicates) and against paraphrases of three
other intents of its domain (hard non-duplicates). `python -m loadtests.workloads.pairs OUT.csv`."""
from __future__ import annotations

import csv
import random
import sys
from collections.abc import Iterator

from loadtests.workloads.customer_service import CustomerService


def pairs(seed: int = 0, per_intent: int = 3) -> Iterator[tuple[str, str, int]]:
    work, rng = CustomerService(seed), random.Random(seed)
    by_domain: dict[str, list] = {}
    for intent in work.intents:
        by_domain.setdefault(intent.domain, []).append(intent)
    for intent in work.intents:
        first = intent.paraphrases[0]
        for other in rng.sample(intent.paraphrases[1:], per_intent):
            yield first, other, 1
        for neighbour in rng.sample([i for i in by_domain[intent.domain] if i is not intent], per_intent):
            yield first, rng.choice(neighbour.paraphrases), 0


def write(path: str, seed: int = 0) -> int:
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["question1", "question2", "is_duplicate"])
        rows = list(pairs(seed))
        out.writerows(rows)
    return len(rows)


if __name__ == "__main__":
    print(f"{write(sys.argv[1])} pairs written to {sys.argv[1]}")
