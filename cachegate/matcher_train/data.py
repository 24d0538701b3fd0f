"""The training data of the matcher and what is held apart from it.

CLINC150 intents split by domain: training domains feed the projection and the verifier; calibration domains
(never trained on: by default the two of median confusability) and Quora pairs held apart by question fit the
decision; left-out domains are used for nothing. Out-of-scope questions are only ever looked up, in calibration.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cachegate.calibrate import question_groups
from cachegate.semantic import datasets

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
    train: list[tuple[str, str]]          # (question, intent) of the training domains
    val: list[tuple[str, str]]            # their val questions: held apart, for the report
    calibration: list[tuple[str, str]]    # train + val questions of the calibration domains
    out_of_scope: list[str]               # oos_train + oos_val
    qqp_train: list[datasets.Pair]
    qqp_held: list[datasets.Pair]         # Quora pairs held apart from training, by question
    domains: dict[str, list[str]]         # every domain read, with its intents
    training_domains: list[str]
    calibration_domains: list[str]
    left_out: list[str]

    def texts(self) -> list[str]:
        rows = self.train + self.val + self.calibration
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


def typical_domains(rows: list[tuple[str, str]], vectors: dict[str, np.ndarray], domain_of: dict[str, str],
                    count: int) -> list[str]:
    """The `count` domains of median confusability: ranked by how often a question's nearest neighbour (plain
    cosine) has another intent, the ones in the middle. The cut fitted on them is the one a typical domain the
    matcher never saw needs: neither the tidiest domain nor one whose labels the embedding cannot tell apart."""
    m = np.stack([vectors[t] for t, _ in rows])
    nearest = np.concatenate([nearest_other(m[s: s + 2048], m, s) for s in range(0, len(m), 2048)])
    errors: dict[str, list[bool]] = {}
    for r, (_, intent) in enumerate(rows):
        errors.setdefault(domain_of[intent], []).append(rows[nearest[r]][1] != intent)
    ranked = sorted(errors, key=lambda d: (-float(np.mean(errors[d])), d))
    start = max(0, (len(ranked) - count) // 2)
    return ranked[start: start + count]


def nearest_other(block: np.ndarray, m: np.ndarray, start: int) -> np.ndarray:
    sims = block @ m.T
    sims[np.arange(len(block)), start + np.arange(len(block))] = -2.0
    return sims.argmax(1)


def load_corpus(folder: Path, cut: Slice, left_out: list[str], calibration_domains: list[str] | None,
                seed: int, vectors_for) -> Corpus:
    """`vectors_for(texts)` gives plain embeddings (used to pick the calibration domains when none are named)."""
    data, domains = read_clinc(folder, cut, left_out)
    domain_of = {i: d for d, intents in domains.items() for i in intents}
    every = rows_of(data, "train", set(domain_of), cut.per_intent)
    if not calibration_domains:
        calibration_domains = typical_domains(every, vectors_for([t for t, _ in every]), domain_of, 2)
    held = {i for d in calibration_domains for i in domains[d]}
    training = set(domain_of) - held
    val_cap = None if cut.per_intent is None else max(2, cut.per_intent // 4)
    qqp = datasets.read_pairs_csv(folder / "semantic" / "qqp_train.csv")
    if cut.qqp_pairs:
        qqp = random.Random(seed).sample(qqp, cut.qqp_pairs)
    qqp_train, qqp_held = split_qqp(qqp, seed)
    oos = [t.strip() for split in ("oos_train", "oos_val") for t, _ in data[split]]
    return Corpus(
        train=[r for r in every if r[1] in training], val=rows_of(data, "val", training, val_cap),
        calibration=[r for r in every if r[1] in held] + rows_of(data, "val", held, val_cap),
        out_of_scope=oos[: 2 * cut.per_intent] if cut.per_intent else oos,
        qqp_train=qqp_train, qqp_held=qqp_held, domains=domains,
        training_domains=[d for d in domains if d not in calibration_domains],
        calibration_domains=list(calibration_domains), left_out=list(left_out))
