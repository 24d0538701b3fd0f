"""The matcher's files: what `cachegate train matcher` writes and the tier loads, applied to the packaged MiniLM.

A matcher folder holds `matcher.json` (the decision and its fitted figures), `projection.safetensors` (the tuned
retrieval projection), `verifier.safetensors` (LoRA deltas of the cross-encoder's layers plus its small head)
and `CARD.md`. Only what training changed is stored; the packaged weights are the rest.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from cachegate.semantic.embedder import PACKAGED, resolve_path

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


def lora_factors(peft_model) -> tuple[dict, dict[str, float]]:
    """The LoRA factors (A, B) and scaling of every adapted linear map of a PEFT model, by module name."""
    tensors, scaling = {}, {}
    for name, module in peft_model.named_modules():
        if "default" in getattr(module, "lora_A", {}):
            key = name.removeprefix("base_model.model.")
            tensors[f"{key}.lora_A"] = module.lora_A["default"].weight.detach().clone()
            tensors[f"{key}.lora_B"] = module.lora_B["default"].weight.detach().clone()
            scaling[key] = float(module.scaling["default"])
    return tensors, scaling


def save_verifier(folder: str | Path, factors: dict, scaling: dict[str, float], merged_model,
                  config: dict[str, Any]) -> None:
    """The LoRA factors and the trained head (taken from the merged model), in float16."""
    import torch
    from safetensors.torch import save_file
    head = {k: v.detach().clone() for k, v in merged_model.state_dict().items() if k.startswith(HEAD_PREFIXES)}
    save_file({k: v.to(torch.float16).contiguous() for k, v in (factors | head).items()},
              str(Path(folder) / "verifier.safetensors"))
    (Path(folder) / "verifier.json").write_text(json.dumps(config | {"scaling": scaling}, indent=1) + "\n")


def load_verifier(folder: str | Path, precision: str = "float32"):
    """(tokenizer, model, max_length): the packaged layers with the LoRA deltas merged in, in `precision`."""
    import torch
    from safetensors.torch import load_file
    config = json.loads((Path(folder) / "verifier.json").read_text())
    tensors = load_file(str(Path(folder) / "verifier.safetensors"))
    tokenizer, model = base_verifier(config["layers"])
    with torch.no_grad():
        for key, scale in config["scaling"].items():
            weight = model.get_submodule(key).weight
            delta = tensors[f"{key}.lora_B"].float() @ tensors[f"{key}.lora_A"].float()
            weight += scale * delta.to(weight.dtype)
        head = {k: v.float() for k, v in tensors.items() if k.startswith(HEAD_PREFIXES)}
        missing = set(head) - set(model.state_dict())
        assert not missing, f"verifier head parameters the model lacks: {sorted(missing)}"
        model.load_state_dict(head, strict=False)
    return tokenizer, model.to(getattr(torch, precision)).eval(), int(config["max_length"])
