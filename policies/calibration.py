"""Fitting the calibrated evaluator: logistic weights over signals, and score cuts per target rate.

Cuts are read off out-of-fold scores so that each stage of the policy (same wording against one cut,
other pairs against another; the same words always hit) keeps a confidence bound on its false-hit rate
within the target. Pure numpy/scikit-learn.
"""
from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, NamedTuple

import numpy as np

from policies.signals import FEATURES

TARGETS = (0.01, 0.02, 0.03, 0.04, 0.05, 0.1)
FIT_FLOOR = 0.7   # pairs less similar than this are never hits; the evaluator learns the hard region above
C_REGULARISATION = 0.001
NEVER = 1.0 + 1e-6   # a cut no score reaches
STEADY_AFTER = 25    # other-stage hits past which the false-hit bound must hold at every higher cut


@dataclass(frozen=True)
class Rates:
    hit_rate: float         # hits among true matches / true matches
    false_hit_rate: float   # hits on non-matches / all hits
    hits: int

    def as_dict(self) -> dict[str, float]:
        return {"hit_rate": round(self.hit_rate, 4), "false_hit_rate": round(self.false_hit_rate, 4),
                "hits": self.hits}


class Rows(NamedTuple):
    """Labeled pairs as the fit sees them."""
    features: np.ndarray    # pair_features per pair; column 0 is the cosine
    labels: np.ndarray      # True: the entry answers the question
    kinds: np.ndarray       # policies.differences.relation kind per pair
    calibrate: np.ndarray   # rows whose false-hit rate the cuts bound (the hard, labeled pairs)
    groups: np.ndarray      # rows sharing a question share a group, so folds never split them

    def subset(self, mask: np.ndarray) -> Rows:
        return Rows(*(a[mask] for a in self))


def rates(hit: np.ndarray, label: np.ndarray) -> Rates:
    hits = int(hit.sum())
    true_hits = int((hit & label).sum())
    return Rates(true_hits / max(1, int(label.sum())), (hits - true_hits) / hits if hits else 0.0, hits)


def z_for(confidence: float) -> float:
    return NormalDist().inv_cdf(confidence) if confidence > 0.5 else 0.0


def wilson_upper(false: np.ndarray, n: np.ndarray, z: float) -> np.ndarray:
    n = np.maximum(n, 1)
    p = false / n
    centre = p + z * z / (2 * n)
    spread = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre + spread) / (1 + z * z / n)


def best_threshold(scores: np.ndarray, label: np.ndarray, max_fhr: float, z: float = 0.0,
                   base: tuple[int, int] = (0, 0), steady_after: int = 0) -> tuple[float, int]:
    """(lowest cut, hits) whose false-hit rate, or its upper bound at `z`, stays within `max_fhr`, counting
    `base` = (hits, false hits) that happen whatever the cut. With `steady_after`, every higher cut with at
    least that many hits must qualify too, so a lucky dip far down the curve is not taken. (NEVER, 0)
    when no cut qualifies."""
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], label[order].astype(bool)
    n = np.arange(1, len(s) + 1) + base[0]
    ok = wilson_upper(np.cumsum(~y) + base[1], n, z) <= max_fhr
    if steady_after:
        ok &= np.cumsum(~ok & (n >= steady_after)) == 0
    ok = np.flatnonzero(ok & np.r_[s[:-1] > s[1:], True] & (s > 0))   # cut between distinct scores
    if not len(ok):
        return NEVER, 0
    i = ok[-1]
    return (float(s[i]) if i + 1 == len(s) else float((s[i] + s[i + 1]) / 2)), int(i + 1)


def hit_rate_at(scores: np.ndarray, label: np.ndarray, max_fhr: float) -> tuple[float, float]:
    """(hit rate, threshold) of `scores` at the loosest threshold whose false-hit rate is ≤ max_fhr."""
    t, _ = best_threshold(scores, label, max_fhr)
    return rates(scores >= t, label).hit_rate, t


def best_cuts(scores: np.ndarray, label: np.ndarray, kinds: np.ndarray, max_fhr: float, z: float) -> dict:
    """Cuts for the two stages, each keeping its own false-hit bound within `max_fhr`: same-wording pairs,
    then every other pair, whose thin, noisy top must stay within it all the way down to the cut.
    (Same-words pairs always hit: nothing to cut.)"""
    wording, other = kinds == "same wording", kinds == "other"
    near, _ = best_threshold(scores[wording], label[wording], max_fhr, z)
    cut, _ = best_threshold(scores[other], label[other], max_fhr, z, steady_after=STEADY_AFTER)
    return {"same_wording": near, "other": cut}


def fit_logistic(x: np.ndarray, y: np.ndarray, c: float = C_REGULARISATION) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression
    model = LogisticRegression(C=c, max_iter=2000).fit(x, y)
    return model.coef_[0], float(model.intercept_[0])


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))


def out_of_fold(x: np.ndarray, y: np.ndarray, groups: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """Scores of each row from a model fitted without its group's fold."""
    _, group_index = np.unique(groups, return_inverse=True)
    fold = np.random.default_rng(seed).integers(0, folds, group_index.max() + 1)[group_index]
    scores = np.zeros(len(y))
    for k in range(folds):
        w, b = fit_logistic(x[fold != k], y[fold != k])
        scores[fold == k] = sigmoid(x[fold == k] @ w + b)
    return scores


def trainable(rows: Rows) -> np.ndarray:
    """Rows the evaluator learns from: above the cosine floor and not settled by a veto."""
    return (rows.features[:, 0] >= FIT_FLOOR) & (rows.kinds != "differs")


def fit(rows: Rows, target: float, embedding_dim: int = 0, confidence: float = 0.75, folds: int = 5,
        seed: int = 0) -> dict[str, Any]:
    """Fit weights on the trainable rows, cuts per target on the calibration rows' out-of-fold scores
    (vetoed rows and rows below the floor count as misses); returns the policy's dict."""
    use = trainable(rows)
    mean, scale = rows.features[use].mean(0), rows.features[use].std(0) + 1e-9
    x, y = (rows.features[use] - mean) / scale, rows.labels[use].astype(int)
    oof = np.zeros(len(rows.labels))
    oof[use] = out_of_fold(x, y, rows.groups[use], folds, seed)
    oof[rows.kinds == "same words"] = 1.0
    cal = rows.calibrate
    z = z_for(confidence)
    cuts = {t: best_cuts(oof[cal], rows.labels[cal], rows.kinds[cal], t, z) for t in sorted({*TARGETS, target})}
    w, b = fit_logistic(x, y)
    return policy_dict(w, b, mean, scale, cuts, target, FIT_FLOOR, embedding_dim) | {"confidence": confidence}


def policy_dict(w, b, mean, scale, cuts, target, min_cosine, embedding_dim: int = 0,
                gate: float = 0.9) -> dict[str, Any]:
    def r(values):
        return [float(f"{v:.6g}") for v in values]
    return {"kind": "calibrated", "features": list(FEATURES), "embedding_dim": embedding_dim,
            "weights": r(w), "bias": float(b), "mean": r(mean), "scale": r(scale),
            "thresholds": {f"{t:g}": c for t, c in cuts.items()},
            "target_false_hit_rate": target, "min_cosine": min_cosine,
            "context_gate": {"min_similarity": gate}}
