"""The learned router: a logistic classifier (simple / complex) over a request's sentence embedding
and the complexity cues, trained from labeled examples. Pure: vectors in, a tier out.

`fit` trains it, `to_dict` / `from_dict` give its file form (written by `cachegate router train`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from policies.routing import CODE, LARGE, MATH, REASONING, SMALL, THOROUGH, RouteDecision, RouteInput, cues

CUE_FEATURES = ("log_prompt_tokens", "log_max_tokens", "turns", "code", "math", "reasoning", "thorough",
                "tools", "completion")
KIND = "learned-router"


def cue_features(request: RouteInput) -> np.ndarray:
    return np.array([
        math.log1p(request.prompt_tokens), math.log1p(request.max_tokens or 0), request.turns,
        cues(CODE, request.text), cues(MATH, request.text), cues(REASONING, request.text),
        cues(THOROUGH, request.text), float(request.has_tools), float(request.kind == "completions"),
    ], dtype=np.float64)


def features(request: RouteInput) -> np.ndarray:
    assert request.embedding is not None, "the learned router needs the request's embedding"
    return np.concatenate([cue_features(request), np.asarray(request.embedding, dtype=np.float64)])


@dataclass(frozen=True)
class LearnedRouter:
    weights: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    threshold: float = 0.5          # P(complex) at or above which a request goes large
    embedding_model: str = ""
    needs_embedding = True

    def probability(self, x: np.ndarray) -> float:
        z = self.bias + float(((x - self.mean) / self.scale) @ self.weights)
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def route(self, request: RouteInput) -> RouteDecision:
        p = self.probability(features(request))
        return RouteDecision(LARGE if p >= self.threshold else SMALL, p, (f"p(complex)={p:.2f}",))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": KIND, "cue_features": list(CUE_FEATURES), "embedding_model": self.embedding_model,
                "weights": self.weights.tolist(), "bias": self.bias, "mean": self.mean.tolist(),
                "scale": self.scale.tolist(), "threshold": self.threshold}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LearnedRouter:
        if data.get("kind") != KIND or tuple(data.get("cue_features", ())) != CUE_FEATURES:
            raise ValueError("not a learned-router file of this version (retrain with `cachegate router train`)")
        weights, mean, scale = (np.asarray(data[k], dtype=np.float64) for k in ("weights", "mean", "scale"))
        if not len(weights) == len(mean) == len(scale):
            raise ValueError("learned-router weights, mean and scale differ in length")
        return cls(weights, float(data["bias"]), mean, scale, threshold=float(data["threshold"]),
                   embedding_model=data.get("embedding_model", ""))


def fit(x: np.ndarray, labels: np.ndarray, l2: float = 1.0, embedding_model: str = "") -> LearnedRouter:
    """Logistic regression (labels: 1 = complex) on standardised features."""
    from sklearn.linear_model import LogisticRegression
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    model = LogisticRegression(C=1.0 / l2, max_iter=2000, class_weight="balanced")
    model.fit((x - mean) / scale, labels)
    return LearnedRouter(model.coef_[0].astype(np.float64), float(model.intercept_[0]), mean, scale,
                         embedding_model=embedding_model)
