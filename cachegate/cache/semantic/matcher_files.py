"""The matcher's files: what `cachegate train matcher` writes and the tier loads, applied to the packaged MiniLM.

A matcher folder holds `matcher.json` (the decision and its fitted figures), `projection.safetensors` (the tuned
retrieval projection), `verifier.safetensors` (what fine-tuning changed in the cross-encoder's layers, as int8
deltas with a scale per row, plus its small head) and `CARD.md`. The packaged weights are the rest.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from cachegate.cache.semantic.embedder import PACKAGED, resolve_path

PACKAGED_MATCHER = "policies/data/matcher"
HEAD_PREFIXES = ("classifier.", "bert.pooler.")


def packaged_folder() -> Path:
    return Path(str(resources.files("policies").joinpath("data/matcher")))


def is_matcher(path: str | Path) -> bool:
    return (Path(path) / "matcher.json").exists()


def read_matcher(folder: str | Path) -> dict[str, Any]:
    return json.loads((Path(folder) / "matcher.json").read_text())


def load_policy(folder: str | Path, namespaces: dict[str, float] | None = None,
                cosine_namespaces: dict[str, float] | None = None):
    from safetensors.numpy import load_file

    from policies.matcher import matcher_from_dict
    projection = load_file(str(Path(folder) / "projection.safetensors"))["projection"]
    return matcher_from_dict(read_matcher(folder), projection, namespaces, cosine_namespaces)


def save_projection(folder: str | Path, projection: np.ndarray) -> None:
    from safetensors.numpy import save_file
    save_file({"projection": np.ascontiguousarray(projection, dtype=np.float16)},
              str(Path(folder) / "projection.safetensors"))


def base_verifier(layers: int):
    """The packaged MiniLM's first `layers` layers under a one-logit classification head (the head is new)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging
    path = resolve_path(PACKAGED)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()     # the head is expected to be missing from the checkpoint
    try:
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1, num_hidden_layers=layers)
    finally:
        hf_logging.set_verbosity(verbosity)
    return AutoTokenizer.from_pretrained(path), model


def quantised_delta(tuned, base) -> tuple:
    """(int8 values, float scale per row) of tuned - base: rows scaled to the int8 range."""
    import torch
    delta = (tuned.float() - base.float()).reshape(tuned.shape[0], -1)
    scale = delta.abs().amax(dim=1).clamp_min(1e-12) / 127.0
    return torch.round(delta / scale[:, None]).to(torch.int8).reshape(tuned.shape), scale.to(torch.float32)


def save_verifier(folder: str | Path, tuned_model, base_model, config: dict[str, Any]) -> None:
    """The trained head as is, every other changed tensor as an int8 delta from the packaged weights."""
    import torch
    from safetensors.torch import save_file
    base = base_model.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    for key, value in tuned_model.state_dict().items():
        if key.startswith(HEAD_PREFIXES):
            tensors[key] = value.detach().to(torch.float16).contiguous()
        elif key in base and value.is_floating_point() and not torch.equal(value, base[key]):
            tensors[f"{key}.delta"], tensors[f"{key}.scale"] = quantised_delta(value.detach(), base[key])
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(Path(folder) / "verifier.safetensors"))
    (Path(folder) / "verifier.json").write_text(json.dumps(config, indent=1) + "\n")


def load_verifier(folder: str | Path, precision: str = "float32"):
    """(tokenizer, model, max_length): the packaged layers with the stored deltas added, in `precision`."""
    import torch
    from safetensors.torch import load_file
    config = json.loads((Path(folder) / "verifier.json").read_text())
    tensors = load_file(str(Path(folder) / "verifier.safetensors"))
    tokenizer, model = base_verifier(config["layers"])
    state = model.state_dict()
    changed = {k: v.float() for k, v in tensors.items() if k.startswith(HEAD_PREFIXES)}
    for key in (k.removesuffix(".delta") for k in tensors if k.endswith(".delta")):
        delta = tensors[f"{key}.delta"].float().reshape(len(tensors[f"{key}.scale"]), -1)
        changed[key] = state[key] + (delta * tensors[f"{key}.scale"][:, None]).reshape(state[key].shape)
    missing = set(changed) - set(state)
    assert not missing, f"verifier parameters the model lacks: {sorted(missing)}"
    model.load_state_dict(changed, strict=False)
    return tokenizer, model.to(getattr(torch, precision)).eval(), int(config["max_length"])
