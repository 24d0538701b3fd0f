"""Loading the threshold policy the config names: the packaged matcher, plain cosine, or a file or folder.

`packaged` is the trained matcher in `policies/data/matcher/` (rebuilt with `cachegate train matcher`); a folder
holding `matcher.json` is another matcher; a JSON file is a policy from `cachegate calibrate` (the lexical
evaluator, `policies/data/semantic_policy.json`, is one). With a matcher or calibrated policy, a namespace given a
`threshold` decides by plain cosine (a lenient FAQ namespace).
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from cachegate.cache.semantic import matcher_files
from cachegate.settings import SemanticCacheSettings
from policies.thresholds import ThresholdPolicy, policy_from_dict

PACKAGED = "packaged"


def packaged_policy() -> dict[str, Any]:
    """The lexical evaluator fitted by `cachegate calibrate` (its context gate is the matcher's too)."""
    return json.loads(resources.files("policies").joinpath("data/semantic_policy.json").read_text())


def read_policy(name: str) -> dict[str, Any]:
    if name == PACKAGED:     # a build without the matcher's files
        return packaged_policy()
    return json.loads(Path(name).read_text())


def matcher_folder(cfg: SemanticCacheSettings) -> Path | None:
    """The matcher's folder when the config names one (`packaged` or a folder), else None."""
    if cfg.policy == PACKAGED:
        folder = matcher_files.packaged_folder()
        return folder if matcher_files.is_matcher(folder) else None
    if cfg.policy != "cosine" and matcher_files.is_matcher(cfg.policy):
        return Path(cfg.policy)
    return None


def load_policy(cfg: SemanticCacheSettings) -> ThresholdPolicy:
    if cfg.policy == "cosine":
        data: dict[str, Any] = {"kind": "cosine", "threshold": cfg.threshold,
                                "context_gate": packaged_policy().get("context_gate", {})}
        overrides = {n: s.threshold for n, s in cfg.namespaces.items() if s.threshold is not None}
        return policy_from_dict(data, overrides)
    targets = {n: s.target_false_hit_rate for n, s in cfg.namespaces.items() if s.target_false_hit_rate is not None}
    by_cosine = {n: s.threshold for n, s in cfg.namespaces.items() if s.threshold is not None}
    folder = matcher_folder(cfg)
    if folder is not None:
        return matcher_files.load_policy(folder, targets, by_cosine)
    return policy_from_dict(read_policy(cfg.policy), targets, by_cosine)
