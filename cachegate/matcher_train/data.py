"""The training data of the matcher and what is held apart from it.

CLINC150 intents split by domain into folds of two domains: the decision's cut is fitted on each fold's val
questions scored by a projection trained without that fold (cross-fitting), so it is the cut a domain the
matcher never saw needs; the shipped projection is then trained on every domain. Quora pairs are split by
question (a share held apart for the figures); left-out domains are used for nothing. Out-of-scope questions
are only ever looked up.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cachegate.cache.semantic import datasets
from cachegate.commands.calibrate import question_groups

DEFAULT_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
QQP_HELD_APART = 0.15


@dataclass(frozen=True)
class Slice:
    """How much of the data a run reads: all of it, or the quick slice CI trains on."""
    domains: int | None = None          # at most this many domains (None: all)
    per_intent: int | None = None       # at most this many train questions per intent
    qqp_pairs: int | None = None


FULL, QUICK = Slice(), Slice(domains=4, per_intent=12, qqp_pairs=300)


@dataclass(frozen=True)
class Corpus:
    train: list[tuple[str, str]]          # (question, intent) of every domain kept
    val: list[tuple[str, str]]            # their val questions: only ever looked up
    out_of_scope: list[str]               # oos_train + oos_val: only ever looked up
    qqp_train: list[datasets.Pair]
    qqp_held: list[datasets.Pair]         # Quora pairs held apart from training, by question
    domains: dict[str, list[str]]         # every domain kept, with its intents
    folds: list[list[str]]                # domains held out together when cross-fitting
    left_out: list[str]

    def domain_of(self) -> dict[str, str]:
        return {i: d for d, intents in self.domains.items() for i in intents}

    def outside(self, fold: list[str], contrasts: list = ()) -> tuple[list[tuple[str, str]], list]:
        """The train rows and the minimal pairs (grouped by intent) of every domain but the fold's: all that a
        projection cross-fitted for the fold may read."""
        domain_of = self.domain_of()
        return ([r for r in self.train if domain_of[r[1]] not in fold],
                [t for t in contrasts if domain_of[t.group] not in fold])

    def texts(self) -> list[str]:
        rows = self.train + self.val
        return sorted({t for t, _ in rows} | set(self.out_of_scope) | {t for p in self.qqp_train + self.qqp_held
                                                                      for t in (p.a, p.b)})


def read_clinc(folder: Path, cut: Slice, left_out: list[str]) -> tuple[dict, dict[str, list[str]]]:
    data = json.loads((folder / "intents" / "clinc150.json").read_text())
    domains = json.loads((folder / "intents" / "clinc150_domains.json").read_text())
    unknown = [d for d in left_out if d not in domains]
    if unknown:
        raise SystemExit(f"unknown domains {unknown}; the data has {sorted(domains)}")
    kept = {d: v for d, v in domains.items() if d not in left_out}
    if cut.domains:
        kept = dict(list(kept.items())[: cut.domains])
    return data, kept


def rows_of(data: dict, split: str, intents: set[str], per_intent: int | None) -> list[tuple[str, str]]:
    seen: dict[str, int] = {}
    out = []
    for text, intent in data[split]:
        if intent in intents and (per_intent is None or seen.get(intent, 0) < per_intent):
            seen[intent] = seen.get(intent, 0) + 1
            out.append((text.strip(), intent))
    return out


def split_qqp(pairs: list[datasets.Pair], seed: int) -> tuple[list[datasets.Pair], list[datasets.Pair]]:
    """Pairs of a held-apart share of the question groups (a question never sits on both sides)."""
    groups = question_groups(pairs)
    held = np.random.default_rng(seed).random(groups.max() + 1) < QQP_HELD_APART
    return [p for p, g in zip(pairs, groups) if not held[g]], [p for p, g in zip(pairs, groups) if held[g]]


def pair_folds(domains: list[str]) -> list[list[str]]:
    """Consecutive pairs of domains (an odd one out joins the last fold)."""
    folds = [domains[k: k + 2] for k in range(0, len(domains) - len(domains) % 2, 2)]
    if len(domains) % 2:
        folds[-1].append(domains[-1])
    return folds


def load_corpus(folder: Path, cut: Slice, left_out: list[str], seed: int) -> Corpus:
    data, domains = read_clinc(folder, cut, left_out)
    domain_of = {i: d for d, intents in domains.items() for i in intents}
    val_cap = None if cut.per_intent is None else max(2, cut.per_intent // 4)
    qqp = datasets.read_pairs_csv(folder / "semantic" / "qqp_train.csv")
    if cut.qqp_pairs:
        qqp = random.Random(seed).sample(qqp, cut.qqp_pairs)
    qqp_train, qqp_held = split_qqp(qqp, seed)
    oos = [t.strip() for split in ("oos_train", "oos_val") for t, _ in data[split]]
    return Corpus(
        train=rows_of(data, "train", set(domain_of), cut.per_intent), val=rows_of(data, "val", set(domain_of), val_cap),
        out_of_scope=oos[: 2 * cut.per_intent] if cut.per_intent else oos, qqp_train=qqp_train, qqp_held=qqp_held,
        domains=domains, folds=pair_folds(list(domains)), left_out=list(left_out))
