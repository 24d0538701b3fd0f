"""`cachegate router train DATA` and `cachegate router eval DATA`: fit the learned router on labeled
examples (JSONL: `kind`, `messages` or `prompt`, optional `max_tokens`, `label` simple|complex) and
measure it beside the complexity router and a length-only baseline: accuracy, share sent to the
large model, confusion table."""
from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cachegate.backends.base import BackendRequest, Sampling
from cachegate.routing.router import route_input
from policies.routing import LARGE, ComplexityRouter, RouteInput

PACKAGED_EMBEDDER = "packaged:all-minilm-l6-v2"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="JSONL of labeled examples (python -m loadtests.router_examples writes one)")
    p.add_argument("--model", help="train: where to write the router (default learned-router.json); "
                                   "eval: the router file to measure")
    p.add_argument("--holdout", type=float, default=0.25, help="train: share of examples held out")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--embedder", default=PACKAGED_EMBEDDER)
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the tables")


def run(args: argparse.Namespace) -> int:
    rows = load(args.data)
    if args.what == "train":
        report = train(rows, args)
    else:
        report = evaluate_file(rows, args)
    print(json.dumps(report) if args.json else render(report))
    return 0


def load(path: str) -> list[dict]:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    bad = [r for r in rows if r.get("label") not in ("simple", "complex")]
    if bad:
        raise SystemExit(f"{path}: every row needs label simple|complex ({len(bad)} do not)")
    return rows


def inputs(rows: list[dict], embedder: str) -> list[RouteInput]:
    from cachegate.cache.semantic.embedder import Embedder
    plain = [route_input(row.get("kind", "chat"), to_request(row)) for row in rows]
    vectors = Embedder(embedder).encode([r.text for r in plain])
    return [RouteInput(**{**r.__dict__, "embedding": v}) for r, v in zip(plain, vectors)]


def to_request(row: dict) -> BackendRequest:
    explicit = row.get("max_tokens")
    params = Sampling(max_tokens=explicit or 256)
    if row.get("kind") == "completions":
        return BackendRequest(model="auto", params=params, prompt=row["prompt"], max_tokens_explicit=bool(explicit))
    return BackendRequest(model="auto", params=params, messages=row["messages"],
                          max_tokens_explicit=bool(explicit))


def train(rows: list[dict], args: argparse.Namespace) -> dict:
    from policies.learned_router import features, fit
    rows = dedupe(rows)
    train_rows, held_rows = split(rows, args.holdout, args.seed)
    train_in, held_in = inputs(train_rows, args.embedder), inputs(held_rows, args.embedder)
    y_train = labels(train_rows)
    router = fit(np.stack([features(r) for r in train_in]), y_train, embedding_model=args.embedder)
    out = Path(args.model or "learned-router.json")
    out.write_text(json.dumps(router.to_dict()))
    cut = length_threshold(train_in, y_train)
    report = compare(held_in, labels(held_rows), router, cut)
    return report | {"model_file": str(out), "train_examples": len(train_rows), "held_out": len(held_rows),
                     "length_threshold_tokens": cut}


def evaluate_file(rows: list[dict], args: argparse.Namespace) -> dict:
    from policies.learned_router import LearnedRouter
    if not args.model:
        raise SystemExit("router eval needs --model FILE (from `cachegate router train`)")
    router = LearnedRouter.from_dict(json.loads(Path(args.model).read_text()))
    examples = inputs(rows, router.embedding_model or args.embedder)
    y = labels(rows)
    return compare(examples, y, router, length_threshold(examples, y)) | {"examples": len(rows)}


def dedupe(rows: list[dict]) -> list[dict]:
    seen, out = set(), []
    for row in rows:
        key = json.dumps([row.get("messages"), row.get("prompt"), row.get("max_tokens")], sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out


def split(rows: list[dict], holdout: float, seed: int) -> tuple[list[dict], list[dict]]:
    shuffled = rows[:]
    random.Random(seed).shuffle(shuffled)
    n = max(1, int(len(shuffled) * holdout))
    return shuffled[n:], shuffled[:n]


def labels(rows: list[dict]) -> np.ndarray:
    return np.array([row["label"] == "complex" for row in rows], dtype=np.int64)


def length_threshold(examples: list[RouteInput], y: np.ndarray) -> int:
    """The prompt length that best separates the labels: the baseline a router has to beat."""
    lengths = np.array([e.prompt_tokens for e in examples])
    candidates = sorted(set(lengths.tolist())) + [int(lengths.max()) + 1]
    return max(candidates, key=lambda t: ((lengths >= t) == y).mean())


@dataclass
class Scores:
    accuracy: float
    large_share: float
    confusion: dict[str, int]


def score(predicted_large: np.ndarray, y: np.ndarray) -> Scores:
    p, y = predicted_large.astype(bool), y.astype(bool)
    confusion = {"complex->large": int((p & y).sum()), "complex->small": int((~p & y).sum()),
                 "simple->large": int((p & ~y).sum()), "simple->small": int((~p & ~y).sum())}
    return Scores(float((p == y).mean()), float(p.mean()), confusion)


def compare(examples: list[RouteInput], y: np.ndarray, router, cut: int) -> dict:
    complexity = ComplexityRouter()
    routers = {
        "learned": [router.route(e).tier == LARGE for e in examples],
        "complexity": [complexity.route(e).tier == LARGE for e in examples],
        "length_only": [e.prompt_tokens >= cut for e in examples],
    }
    return {name: score(np.array(pred), y).__dict__ for name, pred in routers.items()}


def render(report: dict) -> str:
    lines = [f"{'router':<12} {'accuracy':>9} {'large share':>12}   confusion"]
    for name in ("learned", "complexity", "length_only"):
        s = report[name]
        c = " ".join(f"{k}={v}" for k, v in s["confusion"].items())
        lines.append(f"{name:<12} {s['accuracy']:>9.3f} {s['large_share']:>12.3f}   {c}")
    extra = {k: v for k, v in report.items() if k not in ("learned", "complexity", "length_only")}
    return "\n".join(lines + [json.dumps(extra)])
