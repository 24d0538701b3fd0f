"""Fitting the matcher's decision on held-apart lookups: logistic weights over the evidence, then per target and
stage the lowest score cut whose false-hit rate holds, at a confidence bound, on every calibration set at once
(intents of domains never trained on, out-of-scope questions, Quora pairs held apart). Cuts come from out-of-fold
scores; a set too thin in a stage does not vote on that stage's cut."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cachegate.matcher_train.simulate import Lookups
from policies.calibration import NEVER, STEADY_AFTER, TARGETS, best_threshold, wilson_upper, z_for
from policies.matcher import STAGES, Cuts

FOLDS = 2
MIN_VOTERS = 30      # possible lookups of a stage a set needs before it votes on that stage's cut
ALWAYS = "same words"


@dataclass(frozen=True)
class Fit:
    weights: np.ndarray
    bias: float
    thresholds: dict[float, Cuts]
    oof: dict[str, np.ndarray]     # out-of-fold score of every lookup of each fitting set (-1: no candidate)


def logistic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Weights on the raw evidence (the standardisation folded in)."""
    from sklearn.linear_model import LogisticRegression
    mean, scale = x.mean(0), x.std(0) + 1e-9
    model = LogisticRegression(C=1.0, max_iter=2000).fit((x - mean) / scale, y)
    w = model.coef_[0] / scale
    return w, float(model.intercept_[0] - (mean * w).sum())


def scores(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x @ w + b, -50, 50)))


def learnable(s: Lookups) -> np.ndarray:
    return s.possible & (s.stage != ALWAYS)


def fit_decision(sets: list[Lookups], target: float, confidence: float, seed: int) -> Fit:
    """`sets` by name: 'out_of_scope' sets bound their served rate, the others their false-hit rate."""
    x = np.concatenate([s.evidence[learnable(s)] for s in sets])
    y = np.concatenate([s.right[learnable(s)] for s in sets])
    fold = np.concatenate([fold_of(s, seed) for s in sets])
    oof_all = np.zeros(len(y))
    for k in range(FOLDS):
        w, b = logistic(x[fold != k], y[fold != k])
        oof_all[fold == k] = scores(x[fold == k], w, b)
    oof, start = {}, 0
    for s in sets:
        mine = np.where(s.possible, 1.0, -1.0)         # "same words" lookups score 1 (always served)
        n = int(learnable(s).sum())
        mine[learnable(s)] = oof_all[start: start + n]
        oof[s.name] = mine
        start += n
    w, b = logistic(x, y)
    z = z_for(confidence)
    thresholds = {t: Cuts(*(stage_cut(sets, oof, stage, t, z) for stage in STAGES)) for t in sorted({*TARGETS, target})}
    return Fit(w, b, thresholds, oof)


def fold_of(s: Lookups, seed: int) -> np.ndarray:
    _, index = np.unique(s.groups[learnable(s)], return_inverse=True)
    return np.random.default_rng(seed).integers(0, FOLDS, index.max() + 1 if len(index) else 1)[index]


def stage_cut(sets: list[Lookups], oof: dict[str, np.ndarray], stage: str, target: float, z: float) -> float:
    """The strictest cut any set with enough lookups in this stage asks for (NEVER when none has enough)."""
    votes = [set_cut(s, oof[s.name], s.possible & (s.stage == stage), target, z) for s in sets
             if (s.possible & (s.stage == stage)).sum() >= MIN_VOTERS]
    return max(votes, default=NEVER)


def set_cut(s: Lookups, score: np.ndarray, rows: np.ndarray, target: float, z: float) -> float:
    if s.name == "out_of_scope":
        return rate_cut(score[rows], len(s), target, z)
    cut, _ = best_threshold(score[rows], s.right[rows], target, z, steady_after=STEADY_AFTER)
    return cut


def rate_cut(score: np.ndarray, lookups: int, target: float, z: float) -> float:
    """The lowest cut at which the share of all `lookups` served from these scores stays within `target`."""
    ranked = np.sort(score)[::-1]
    allowed = [k for k in range(len(ranked) + 1) if wilson_upper(np.array(k), np.array(lookups), z) <= target]
    k = max(allowed, default=0)
    if k >= len(ranked):
        return 0.0
    return float(min(NEVER, np.nextafter(ranked[k], 2.0)))


def served(s: Lookups, score: np.ndarray, cuts: Cuts) -> np.ndarray:
    cut = np.array([getattr(cuts, st) if st != ALWAYS else 0.0 for st in s.stage])
    return s.possible & (score >= cut)


def figures(s: Lookups, score: np.ndarray, cuts: Cuts) -> dict:
    """Served, right and wrong among the lookups of one set at a target's cuts."""
    hits = served(s, score, cuts)
    right = hits & s.right
    wrong = int(hits.sum() - right.sum())
    return {"lookups": len(s), "served": int(hits.sum()), "wrong": wrong,
            "served_rate": round(float(hits.mean()), 4),
            "hit_rate": round(float(right.sum() / max(1, s.relevant.sum())), 4),
            "false_hit_rate": round(wrong / max(1, int(hits.sum())), 4)}
