"""Loading the threshold policy the config names: the packaged fitted one, plain cosine, or a file.

The packaged policy (`policies/data/semantic_policy.json`) is refitted with `cachegate calibrate`. With a
calibrated policy, a namespace given a `threshold` decides by plain cosine (a lenient FAQ namespace).
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from cachegate.settings import SemanticCacheSettings
from policies.thresholds import ThresholdPolicy, policy_from_dict

PACKAGED = "packaged"


def packaged_policy() -> dict[str, Any]:
    return json.loads(resources.files("policies").joinpath("data/semantic_policy.json").read_text())


def read_policy(name: str) -> dict[str, Any]:
    if name == PACKAGED:
        return packaged_policy()
    return json.loads(Path(name).read_text())


def load_policy(cfg: SemanticCacheSettings) -> ThresholdPolicy:
    if cfg.policy == "cosine":
        data: dict[str, Any] = {"kind": "cosine", "threshold": cfg.threshold,
                                "context_gate": packaged_policy().get("context_gate", {})}
        overrides = {n: s.threshold for n, s in cfg.namespaces.items() if s.threshold is not None}
    else:
        data = read_policy(cfg.policy)
        overrides = {n: s.target_false_hit_rate for n, s in cfg.namespaces.items()
                     if s.target_false_hit_rate is not None}
        by_cosine = {n: s.threshold for n, s in cfg.namespaces.items() if s.threshold is not None}
        return policy_from_dict(data, overrides, by_cosine)
    return policy_from_dict(data, overrides)
