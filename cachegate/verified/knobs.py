"""The one setting of a namespace that makes its semantic decision stricter or looser: a cosine
threshold (`policy: cosine`, or a namespace a calibrated policy decides by cosine), or the target
false-hit rate whose fitted cut a calibrated or trained policy applies. Past a trained matcher's strictest
fitted target the step halves the target and adds a stricter cut (`MatcherPolicy.past_strictest`). Policies
are immutable: each step returns a new one."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

COSINE_STEP = 0.02
COSINE_CEILING = 0.99


@dataclass(frozen=True)
class Knob:
    kind: str          # "threshold" (higher is stricter) | "target_false_hit_rate" (lower is stricter)
    value: float


def knob_of(policy: Any, namespace: str) -> Knob:
    cosine = getattr(policy, "cosine_namespaces", {})
    if namespace in cosine:
        return Knob("threshold", cosine[namespace])
    if hasattr(policy, "thresholds") and hasattr(policy, "target"):
        return Knob("target_false_hit_rate", policy.namespaces.get(namespace, policy.target))
    return Knob("threshold", policy.namespaces.get(namespace, policy.threshold))


def stricter(policy: Any, knob: Knob) -> float | None:
    """The next stricter value of the knob, or None when it is at its strictest."""
    if knob.kind == "threshold":
        return round(min(COSINE_CEILING, knob.value + COSINE_STEP), 4) if knob.value < COSINE_CEILING else None
    smaller = [t for t in policy.thresholds if t < knob.value - 1e-12]
    if smaller:
        return max(smaller)
    beyond = policy.past_strictest() if hasattr(policy, "past_strictest") else None
    return beyond[0] if beyond is not None else None


def looser(policy: Any, knob: Knob, base: Knob) -> float | None:
    """The next looser value, never looser than `base` (the configured setting); None at the base."""
    if knob.kind == "threshold":
        return round(max(base.value, knob.value - COSINE_STEP), 4) if knob.value > base.value else None
    larger = [t for t in policy.thresholds if knob.value + 1e-12 < t <= base.value + 1e-12]
    return min(larger) if larger else None


def with_knob(policy: Any, namespace: str, kind: str, value: float) -> Any:
    if namespace in getattr(policy, "cosine_namespaces", {}):
        return dataclasses.replace(policy, cosine_namespaces={**policy.cosine_namespaces, namespace: value})
    if kind == "target_false_hit_rate" and value not in policy.thresholds and hasattr(policy, "past_strictest"):
        beyond = policy.past_strictest()
        if beyond is None or abs(beyond[0] - value) > 1e-12:
            raise ValueError(f"no cut for target {value}: the next past the strictest is {beyond}")
        policy = policy.with_cut(*beyond)
    return dataclasses.replace(policy, namespaces={**policy.namespaces, namespace: value})
