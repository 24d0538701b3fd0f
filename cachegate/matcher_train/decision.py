"""Fitting the matcher's decision on held-apart lookups: logistic weights over the evidence, then per target the
lowest score cut whose false-hit rate holds, at a confidence bound, on every calibration set at once (intents of
domains never trained on, out-of-scope questions, Quora pairs held apart). Cuts come from out-of-fold scores."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cachegate.matcher_train.simulate import Lookups
from policies.calibration import NEVER, STEADY_AFTER, TARGETS, best_threshold, wilson_upper, z_for

FOLDS = 2


@dataclass(frozen=True)
class Fit:
    weights: np.ndarray
    bias: float
    thresholds: dict[float, float]
    oof: dict[str, np.ndarray]     # out-of-fold score of every lookup of each fitting set


def logistic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Weights on the raw evidence (the standardisation folded in)."""
    from sklearn.linear_model import LogisticRegression
    mean, scale = x.mean(0), x.std(0) + 1e-9
    model = LogisticRegression(C=1.0, max_iter=2000).fit((x - mean) / scale, y)
    w = model.coef_[0] / scale
    return w, float(model.intercept_[0] - (mean * w).sum())


def scores(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x @ w + b, -50, 50)))


def fit_decision(sets: list[Lookups], target: float, confidence: float, seed: int) -> Fit:
    """`sets` with kind by name: 'out_of_scope' sets bound their served rate, the others their false-hit rate."""
    x = np.concatenate([s.evidence[s.possible] for s in sets])
    y = np.concatenate([s.right[s.possible] for s in sets])
    fold = np.concatenate([fold_of(s, seed) for s in sets])
    oof_all = np.zeros(len(y))
    for k in range(FOLDS):
        w, b = logistic(x[fold != k], y[fold != k])
        oof_all[fold == k] = scores(x[fold == k], w, b)
    oof, start = {}, 0
    for s in sets:
        mine = np.full(len(s), -1.0)
        mine[s.possible] = oof_all[start: start + int(s.possible.sum())]
        oof[s.name] = mine
        start += int(s.possible.sum())
    w, b = logistic(x, y)
    z = z_for(confidence)
    thresholds = {t: max(cut_for(s, oof[s.name], t, z) for s in sets) for t in sorted({*TARGETS, target})}
    return Fit(w, b, thresholds, oof)


def fold_of(s: Lookups, seed: int) -> np.ndarray:
    _, index = np.unique(s.groups[s.possible], return_inverse=True)
    return np.random.default_rng(seed).integers(0, FOLDS, index.max() + 1 if len(index) else 1)[index]


def cut_for(s: Lookups, score: np.ndarray, target: float, z: float) -> float:
    if s.name == "out_of_scope":
        return rate_cut(score, target, z)
    served = s.possible
    cut, _ = best_threshold(score[served], s.right[served], target, z, steady_after=STEADY_AFTER)
    return cut


def rate_cut(score: np.ndarray, target: float, z: float) -> float:
    """The lowest cut at which the share of these lookups served stays within `target` at the bound."""
    ranked = np.sort(score)[::-1]
    allowed = [k for k in range(len(ranked) + 1) if wilson_upper(np.array(k), np.array(len(ranked)), z) <= target]
    k = max(allowed, default=0)
    if k >= len(ranked) or ranked[k] < 0:
        return 0.0
    return float(min(NEVER, np.nextafter(ranked[k], 2.0)))


def figures(s: Lookups, score: np.ndarray, cut: float) -> dict:
    """Served, right and wrong among the lookups of one set at a cut."""
    served = s.possible & (score >= cut)
    right = served & s.right
    wrong = int(served.sum() - right.sum())
    return {"lookups": len(s), "served": int(served.sum()), "wrong": wrong,
            "served_rate": round(float(served.mean()), 4),
            "hit_rate": round(float(right.sum() / max(1, s.relevant.sum())), 4),
            "false_hit_rate": round(wrong / max(1, int(served.sum())), 4)}
