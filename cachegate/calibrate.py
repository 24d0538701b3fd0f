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

from cachegate.semantic import datasets
from cachegate.semantic.context import context_text
from cachegate.semantic.embedder import PACKAGED, Embedder
from policies import calibration
from policies.signals import pair_features
from policies.thresholds import policy_from_dict

GATE_FLOOR, GATE_CEILING = 0.9, 0.995   # the context gate stays within these
GATE_MARGIN = 0.03   # above the closest pair of different conversations seen


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", action="append", required=True,
                   help="pairs CSV, paraphrase JSON or multi-turn JSON (repeatable)")
    p.add_argument("--target-false-hit-rate", type=float, default=0.02)
    p.add_argument("--out", default="semantic_policy.json", help="where to write the fitted policy")
    p.add_argument("--holdout", type=float, default=0.2, help="share of rows held out for the report")
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
    features, labels = feature_matrix(pairs, vectors, embedder.dim)
    hard = np.array([p.hard for p in pairs])
    report = holdout_report(features, labels, hard, args.target_false_hit_rate, args.holdout, args.seed,
                            embedder.dim)
    policy = calibration.fit(features, labels, args.target_false_hit_rate, embedder.dim, seed=args.seed)
    policy["context_gate"] = {"min_similarity": fit_context_gate(conversations, vectors)}
    policy["fitted_on"] = {"files": [Path(f).name for f in args.data], "pairs": len(pairs),
                           "conversations": len(conversations), "holdout": report}
    Path(args.out).write_text(json.dumps(policy, indent=1) + "\n")
    print_report(report, policy, args)
    return 0


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


def conversation_contexts(conversations: list[datasets.Conversation]) -> list[str]:
    return [context_of(c) for c in conversations]


def context_of(c: datasets.Conversation) -> str:
    return context_text([{"role": "user", "content": c.question}, {"role": "assistant", "content": c.answer}],
                        turns=1, max_chars=1500)


def feature_matrix(pairs: list[datasets.Pair], vectors: dict[str, np.ndarray],
                   dim: int) -> tuple[np.ndarray, np.ndarray]:
    rows = [pair_features(p.b, p.a, float(np.dot(vectors[p.a], vectors[p.b])), vectors[p.b], vectors[p.a], dim)
            for p in pairs]
    return np.asarray(rows, dtype=np.float64), np.asarray([p.duplicate for p in pairs])


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


def holdout_report(features: np.ndarray, labels: np.ndarray, hard: np.ndarray, target: float, share: float,
                   seed: int, dim: int) -> dict:
    """Fit without a share of the labeled-pair rows, then measure on them (as `eval semantic` would)."""
    rng = np.random.default_rng(seed + 1)
    held = (rng.random(len(labels)) < share) & hard
    policy = policy_from_dict(calibration.fit(features[~held], labels[~held], target, dim, seed=seed))
    scores = np.array([policy.score_features(f) if f[0] >= policy.min_cosine else 0.0 for f in features[held]])
    hit = scores >= policy.threshold_for("default")
    mine = calibration.rates(hit, labels[held])
    cos_rate, cos_t = calibration.hit_rate_at(features[held, 0], labels[held], mine.false_hit_rate)
    return {"rows": int(held.sum()), "target_false_hit_rate": target, **mine.as_dict(),
            "precision": round(1 - mine.false_hit_rate, 4),
            "cosine_hit_rate_at_same_false_hit_rate": round(cos_rate, 4), "cosine_threshold": round(cos_t, 4)}


def print_report(report: dict, policy: dict, args: argparse.Namespace) -> None:
    summary = {"out": args.out, "holdout": report, "thresholds": policy["thresholds"],
               "context_gate": policy["context_gate"], "min_cosine": policy["min_cosine"]}
    if args.json:
        print(json.dumps(summary))
        return
    print(f"fitted on {policy['fitted_on']['pairs']} pairs, {policy['fitted_on']['conversations']} conversations"
          f" -> {args.out}")
    print(f"held-out rows: {report['rows']}  target false-hit rate: {report['target_false_hit_rate']:.3f}")
    print(f"  policy : hit_rate {report['hit_rate']:.4f}  false_hit_rate {report['false_hit_rate']:.4f}"
          f"  precision {report['precision']:.4f}")
    print(f"  cosine : hit_rate {report['cosine_hit_rate_at_same_false_hit_rate']:.4f} at the same false-hit rate"
          f" (threshold {report['cosine_threshold']:.3f})")
    print(f"context gate: {policy['context_gate']['min_similarity']:.2f}  min cosine: {policy['min_cosine']:.2f}")
