"""`cachegate calibrate`: fit the semantic similarity policy on labeled pairs for a target false-hit rate.

Reports the fitted policy's precision and hit rate on a held-out share of the rows (fitted without them)
next to plain cosine's at the same false-hit rate, then refits on all rows and writes the policy file.
"""
from __future__ import annotations

import argparse
import json
import math
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cachegate.cache.semantic import datasets
from cachegate.cache.semantic.embedder import PACKAGED, Embedder
from cachegate.evaluation.modes import context_of, conversation_contexts
from policies import calibration
from policies.differences import relation
from policies.signals import pair_features
from policies.thresholds import Candidate, policy_from_dict

GATE_FLOOR, GATE_CEILING = 0.9, 0.995   # the context gate stays within these
GATE_MARGIN = 0.03   # above the closest pair of different conversations seen


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", action="append", required=True,
                   help="pairs CSV, paraphrase JSON or multi-turn JSON (repeatable)")
    p.add_argument("--target-false-hit-rate", type=float, default=0.05)
    p.add_argument("--confidence", type=float, default=0.75,
                   help="one-sided confidence that the false-hit rate stays within the target (0.5: point estimate)")
    p.add_argument("--out", default="semantic_policy.json", help="where to write the fitted policy")
    p.add_argument("--report-folds", type=int, default=5, help="folds of the cross-validated report")
    p.add_argument("--report-repeats", type=int, default=3, help="repeats (other fold draws) of that report")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--embedding-cache", help="folder to memoise embeddings in")
    p.add_argument("--json", action="store_true", help="print the report as one JSON line")


def run(args: argparse.Namespace) -> int:
    if not 0 < args.target_false_hit_rate < 1:
        raise SystemExit("--target-false-hit-rate must be between 0 and 1")
    pairs, conversations = read_training_data(args.data, args.seed)
    embedder = Embedder(PACKAGED)
    texts = [t for p in pairs for t in (p.a, p.b)] + [c for c in conversation_contexts(conversations)]
    vectors = datasets.embed_all(embedder, texts, args.embedding_cache)
    rows = build_rows(pairs, vectors, embedder.dim)
    report = holdout_report(pairs, vectors, rows, args, embedder.dim)
    policy = calibration.fit(rows, args.target_false_hit_rate, embedder.dim, args.confidence, seed=args.seed)
    policy["context_gate"] = {"min_similarity": fit_context_gate(conversations, vectors)}
    policy["fitted_on"] = {"command": command_line(args), "files": [Path(f).name for f in args.data],
                           "pairs": len(pairs), "conversations": len(conversations), "holdout": report}
    Path(args.out).write_text(json.dumps(policy, indent=1) + "\n")
    print_report(report, policy, args)
    return 0


def command_line(args: argparse.Namespace) -> str:
    data = " ".join(f"--data {d}" for d in args.data)
    return (f"cachegate calibrate {data} --target-false-hit-rate {args.target_false_hit_rate:g} "
            f"--confidence {args.confidence:g} --seed {args.seed} --out {args.out}")


@dataclass(frozen=True)
class Row(datasets.Pair):
    hard: bool = True    # from a labeled pairs file (held-out rows are drawn from these)


def read_training_data(paths: list[str], seed: int) -> tuple[list[Row], list[datasets.Conversation]]:
    pairs: list[Row] = []
    conversations: list[datasets.Conversation] = []
    for path in paths:
        kind = datasets.kind_of(path)
        if kind == "pairs":
            pairs += [Row(p.a, p.b, p.duplicate, True) for p in datasets.read_pairs_csv(path)]
        elif kind == "paraphrases":
            pairs += [Row(p.a, p.b, p.duplicate, False)
                      for p in with_negatives(datasets.read_paraphrases(path), seed)]
        else:
            conversations += datasets.read_conversations(path)
    if not pairs:
        raise SystemExit("calibrate needs at least one pairs CSV or paraphrase JSON")
    return pairs, conversations


def with_negatives(positives: list[datasets.Pair], seed: int) -> list[datasets.Pair]:
    """Paraphrase files hold matches only: pair each question with another row's paraphrase as a non-match."""
    rng = random.Random(seed)
    others = [p.b for p in positives]
    negatives = []
    for i, p in enumerate(positives):
        j = rng.randrange(len(others) - 1)
        negatives.append(datasets.Pair(p.a, others[j + (j >= i)], False))
    return positives + negatives


def build_rows(pairs: list[Row], vectors: dict[str, np.ndarray], dim: int) -> calibration.Rows:
    """Features, labels and relation of each pair, as the policy sees a lookup (question2 against question1)."""
    features, kinds = [], []
    for p in pairs:
        cosine = float(np.dot(vectors[p.a], vectors[p.b]))
        features.append(pair_features(p.b, p.a, cosine, vectors[p.b], vectors[p.a], dim))
        kinds.append(relation(p.b, p.a, cosine).kind)
    return calibration.Rows(np.asarray(features, dtype=np.float64), np.array([p.duplicate for p in pairs]),
                            np.array(kinds), np.array([p.hard for p in pairs]), question_groups(pairs))


def question_groups(pairs: list[datasets.Pair]) -> np.ndarray:
    """Pairs linked by a shared question get one group id (connected components), so splits keep them apart.
    A made-up negative (a paraphrase against another row's) does not link its two groups."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for p in pairs:
        if getattr(p, "hard", True) or p.duplicate:
            parent[root(p.a)] = root(p.b)
    ids: dict[str, int] = {}
    return np.array([ids.setdefault(root(p.a), len(ids)) for p in pairs])


def fit_context_gate(conversations: list[datasets.Conversation], vectors: dict[str, np.ndarray]) -> float:
    """Above the most similar contexts of two different conversations (different opening questions)."""
    if len(conversations) < 2:
        return GATE_FLOOR
    ctx = np.stack([vectors[context_of(c)] for c in conversations])
    sims = ctx @ ctx.T
    questions = [c.question.lower() for c in conversations]
    same = np.array([[qa == qb for qb in questions] for qa in questions])
    closest = float(sims[~same].max()) if (~same).any() else 0.0
    return min(GATE_CEILING, max(GATE_FLOOR, math.ceil((closest + GATE_MARGIN) * 1000) / 1000))


def holdout_report(pairs: list[Row], vectors: dict[str, np.ndarray], rows: calibration.Rows,
                   args: argparse.Namespace, dim: int) -> dict:
    """Repeated grouped k-fold cross-validation of this very fit: each fold's questions (whole groups) are
    decided, as `eval semantic` would, by a policy fitted without them; all decisions are pooled."""
    hard_hits, hard, easy_hits, easy = [], [], [], []
    for repeat in range(args.report_repeats):
        groups = np.random.default_rng(args.seed + 1 + repeat).integers(0, args.report_folds, rows.groups.max() + 1)
        fold = groups[rows.groups]
        for k in range(args.report_folds):
            policy = policy_from_dict(calibration.fit(rows.subset(fold != k), args.target_false_hit_rate, dim,
                                                      args.confidence, seed=args.seed))
            for p, f in zip(pairs, fold):
                if f == k:
                    (hard if p.hard else easy).append(p)
                    (hard_hits if p.hard else easy_hits).append(decides_hit(policy, p, vectors))
    report = {"folds": args.report_folds, "repeats": args.report_repeats,
              "target_false_hit_rate": args.target_false_hit_rate, "confidence": args.confidence}
    if hard:
        report |= pooled(np.array(hard_hits), hard, vectors)
    if easy:
        labels = np.array([p.duplicate for p in easy])
        report["paraphrases"] = {"rows": len(easy), **calibration.rates(np.array(easy_hits), labels).as_dict()}
    return report


def decides_hit(policy, p: datasets.Pair, vectors: dict[str, np.ndarray]) -> bool:
    cosine = float(np.dot(vectors[p.a], vectors[p.b]))
    return policy.decide(Candidate(p.b, p.a, cosine, query_vector=vectors[p.b], entry_vector=vectors[p.a])).hit


def pooled(hits: np.ndarray, pairs: list[datasets.Pair], vectors: dict[str, np.ndarray]) -> dict:
    """The pooled decisions' rates, next to plain cosine's hit rate at the same false-hit rate."""
    labels = np.array([p.duplicate for p in pairs])
    mine = calibration.rates(hits, labels)
    cosines = np.array([float(np.dot(vectors[p.a], vectors[p.b])) for p in pairs])
    at_same, threshold = calibration.hit_rate_at(cosines, labels, mine.false_hit_rate)
    return {"rows": len(pairs), **mine.as_dict(), "cosine_hit_rate_at_same_false_hit_rate": round(at_same, 4),
            "cosine_threshold": round(threshold, 4)}


def print_report(report: dict, policy: dict, args: argparse.Namespace) -> None:
    summary = {"out": args.out, "holdout": report, "thresholds": policy["thresholds"],
               "context_gate": policy["context_gate"], "min_cosine": policy["min_cosine"]}
    if args.json:
        print(json.dumps(summary))
        return
    print(f"fitted on {policy['fitted_on']['pairs']} pairs, {policy['fitted_on']['conversations']} conversations"
          f" -> {args.out}")
    print(f"{report['repeats']} x {report['folds']}-fold cross-validation by question, target false-hit rate "
          f"{report['target_false_hit_rate']:.3f} at {report['confidence']:.0%} confidence")
    if "rows" in report:
        print(f"  labeled pairs ({report['rows']}): policy hit_rate {report['hit_rate']:.4f}  false_hit_rate "
              f"{report['false_hit_rate']:.4f}; cosine hit_rate {report['cosine_hit_rate_at_same_false_hit_rate']:.4f}"
              f" at the same false-hit rate (threshold {report['cosine_threshold']:.3f})")
    if "paraphrases" in report:
        easy = report["paraphrases"]
        print(f"  paraphrase pairs ({easy['rows']}, half unrelated): hit_rate {easy['hit_rate']:.4f}  "
              f"false_hit_rate {easy['false_hit_rate']:.4f}")
    print(f"context gate: {policy['context_gate']['min_similarity']:.2f}  min cosine: {policy['min_cosine']:.2f}")
