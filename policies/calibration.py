"""Fitting the calibrated evaluator: logistic weights over signals, and score thresholds per target rate.

Thresholds are read off out-of-fold scores with a one-sided upper confidence bound on the false-hit
rate, so a policy fitted for 5% stays under 5% on data it has not seen. Pure numpy/scikit-learn.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from policies.signals import FEATURES

TARGETS = (0.01, 0.02, 0.03, 0.05, 0.1)
Z_90 = 1.2816  # one-sided 90% normal quantile for the Wilson upper bound


@dataclass(frozen=True)
class Rates:
    hit_rate: float         # hits among true matches / true matches
    false_hit_rate: float   # hits on non-matches / all hits
    hits: int

    def as_dict(self) -> dict[str, float]:
        return {"hit_rate": round(self.hit_rate, 4), "false_hit_rate": round(self.false_hit_rate, 4),
                "hits": self.hits}


def rates(hit: np.ndarray, label: np.ndarray) -> Rates:
    hits = int(hit.sum())
    true_hits = int((hit & label).sum())
    return Rates(true_hits / max(1, int(label.sum())), (hits - true_hits) / hits if hits else 0.0, hits)


def best_threshold(scores: np.ndarray, label: np.ndarray, max_fhr: float, conservative: bool = False) -> float:
    """The lowest score threshold whose false-hit rate (or its upper bound) stays within `max_fhr`."""
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], label[order].astype(bool)
    n = np.arange(1, len(s) + 1)
    false = np.cumsum(~y)
    fhr = wilson_upper(false, n) if conservative else false / n
    ok = np.flatnonzero((fhr <= max_fhr) & np.r_[s[:-1] > s[1:], True])  # cut between distinct scores
    if not len(ok):
        return float(s[0]) + 1e-6
    i = ok[-1]
    return float(s[i]) if i + 1 == len(s) else float((s[i] + s[i + 1]) / 2)


def wilson_upper(false: np.ndarray, n: np.ndarray, z: float = Z_90) -> np.ndarray:
    p = false / n
    centre = p + z * z / (2 * n)
    spread = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre + spread) / (1 + z * z / n)


def hit_rate_at(scores: np.ndarray, label: np.ndarray, max_fhr: float) -> tuple[float, float]:
    """(hit rate, threshold) of `scores` at the loosest threshold whose false-hit rate is ≤ max_fhr."""
    t = best_threshold(scores, label, max_fhr)
    return rates(scores >= t, label).hit_rate, t


def fit_logistic(x: np.ndarray, y: np.ndarray, c: float = 1.0) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression
    model = LogisticRegression(C=c, max_iter=1000).fit(x, y)
    return model.coef_[0], float(model.intercept_[0])


def out_of_fold(x: np.ndarray, y: np.ndarray, folds: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    fold = rng.permutation(len(y)) % folds
    scores = np.zeros(len(y))
    for k in range(folds):
        w, b = fit_logistic(x[fold != k], y[fold != k], C_REGULARISATION)
        scores[fold == k] = sigmoid(x[fold == k] @ w + b)
    return scores


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))


FIT_FLOOR = 0.7   # pairs less similar than this are never hits; the evaluator learns the hard region above
C_REGULARISATION = 0.01


def fit(features: np.ndarray, label: np.ndarray, target: float, embedding_dim: int = 0, folds: int = 5,
        seed: int = 0) -> dict[str, Any]:
    """Fit weights on the rows above the cosine floor, thresholds per target on their out-of-fold scores
    (rows below the floor count as misses); returns the policy's dict."""
    above = features[:, 0] >= FIT_FLOOR
    mean, scale = features[above].mean(0), features[above].std(0) + 1e-9
    x, y = (features[above] - mean) / scale, label[above].astype(int)
    oof = np.zeros(len(label))
    oof[above] = out_of_fold(x, y, folds, seed)
    thresholds = {t: best_threshold(oof, label, t, conservative=True) for t in sorted({*TARGETS, target})}
    w, b = fit_logistic(x, y, C_REGULARISATION)
    return policy_dict(w, b, mean, scale, thresholds, target, FIT_FLOOR, embedding_dim)


def policy_dict(w, b, mean, scale, thresholds, target, min_cosine, embedding_dim: int = 0,
                gate: float = 0.9) -> dict[str, Any]:
    def r(values):
        return [float(f"{v:.6g}") for v in values]
    return {"kind": "calibrated", "features": list(FEATURES), "embedding_dim": embedding_dim,
            "weights": r(w), "bias": float(b), "mean": r(mean), "scale": r(scale),
            "thresholds": {f"{t:g}": float(v) for t, v in thresholds.items()},
            "target_false_hit_rate": target, "min_cosine": min_cosine,
            "context_gate": {"min_similarity": gate}}
