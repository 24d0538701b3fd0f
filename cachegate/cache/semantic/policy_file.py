"""Reading a semantic policy file: one from `cachegate calibrate`, or the packaged calibrated evaluator
(`policies/data/semantic_policy.json`, also the context gate of the matcher and of plain cosine).

Which policy the settings name, and how it is built, is `cachegate.build_parts.semantic_policy`.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

PACKAGED = "packaged"


def packaged_policy() -> dict[str, Any]:
    """The lexical evaluator fitted by `cachegate calibrate` (its context gate is the matcher's too)."""
    return json.loads(resources.files("policies").joinpath("data/semantic_policy.json").read_text())


def read_policy(name: str) -> dict[str, Any]:
    if name == PACKAGED:     # a build without the matcher's files
        return packaged_policy()
    return json.loads(Path(name).read_text())
