"""Reading an HF checkpoint folder: config.json (+ generation_config.json) and *.safetensors shards.

Tensor names are mapped to ours (`model.layers.3.self_attn.q_proj` -> `layers.3.attn.q_proj`).
Gemma 3 text folders (model_type gemma3_text) bring per-layer kinds and one RoPE block per kind.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file

from engine.config import FULL, SLIDING, ModelConfig
from engine.errors import UnsupportedModelError
from engine.loader.checkpoint import Checkpoint, infer_weight_flags
from engine.loader.hf_tokenizer import build_hf_tokenizer

RENAMES = (
    ("self_attn.", "attn."), ("input_layernorm.", "attn_norm."), ("post_attention_layernorm.", "mlp_norm."),
)
GEMMA_RENAMES = (
    ("self_attn.", "attn."), ("input_layernorm.", "attn_norm."), ("post_attention_layernorm.", "post_attn_norm."),
    ("pre_feedforward_layernorm.", "mlp_norm."), ("post_feedforward_layernorm.", "post_mlp_norm."),
)
SUPPORTED = {"llama", "mistral", "qwen2", "qwen3", "gemma3_text"}


def read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def as_list(value) -> list[int]:
    return [] if value is None else [int(v) for v in (value if isinstance(value, list) else [value])]


def eos_ids(cfg: dict, generation: dict) -> list[int]:
    """Stop ids from config.json and generation_config.json, in order, without repeats."""
    return list(dict.fromkeys(as_list(cfg.get("eos_token_id")) + as_list(generation.get("eos_token_id"))))


def rope_fields(cfg: dict) -> tuple[float, dict | None]:
    """(theta, scaling) from either the old (`rope_theta`, `rope_scaling`) or new (`rope_parameters`) keys."""
    params = dict(cfg.get("rope_parameters") or {})
    theta = float(cfg.get("rope_theta") or params.get("rope_theta") or 10000.0)
    scaling = dict(cfg.get("rope_scaling") or params)
    scaling.pop("rope_theta", None)
    if "type" in scaling:
        scaling["rope_type"] = scaling.pop("type")
    return theta, (scaling if scaling.get("rope_type", "default") != "default" else None)


def max_context(cfg: dict) -> int:
    """max_position_embeddings, cut to the sliding window where one is used: within the window, full
    attention and sliding-window attention are the same thing."""
    limit = int(cfg.get("max_position_embeddings", 2048))
    window = cfg.get("sliding_window")
    if window and cfg.get("use_sliding_window", cfg.get("model_type") == "mistral"):
        limit = min(limit, int(window))
    return limit


def gemma3_fields(cfg: dict) -> dict:
    """Layer kinds, window, the two RoPE blocks (v5 `rope_parameters` per kind, or v4 flat keys)."""
    if cfg.get("final_logit_softcapping") or cfg.get("attn_logit_softcapping"):
        raise UnsupportedModelError("logit soft-capping is not supported")
    layers = int(cfg["num_hidden_layers"])
    pattern = int(cfg.get("sliding_window_pattern") or cfg.get("_sliding_window_pattern") or 6)
    kinds = cfg.get("layer_types") or [FULL if (i + 1) % pattern == 0 else SLIDING for i in range(layers)]
    params = cfg.get("rope_parameters") or {}
    full = rope_fields({**cfg, "rope_parameters": params.get(FULL, params)})
    local = (params.get(SLIDING) or {}).get("rope_theta") or cfg.get("rope_local_base_freq") or 10000.0
    return {"layer_types": list(kinds), "sliding_window": int(cfg.get("sliding_window") or 0),
            "rope_theta": full[0], "rope_scaling": full[1], "rope_local_theta": float(local),
            "query_pre_attn_scalar": float(cfg.get("query_pre_attn_scalar") or cfg["head_dim"]),
            "hidden_act": cfg.get("hidden_activation") or "gelu_pytorch_tanh", "architecture": "gemma3",
            "qk_norm": True, "tie_word_embeddings": bool(cfg.get("tie_word_embeddings", True)),
            "max_context": int(cfg.get("max_position_embeddings", 32768))}


def hf_config(cfg: dict, generation: dict) -> ModelConfig:
    if cfg.get("model_type") not in SUPPORTED:
        kind = cfg.get("model_type")
        raise UnsupportedModelError(f"model_type {kind!r} is not supported (have {sorted(SUPPORTED)})")
    if cfg.get("mlp_bias"):
        raise UnsupportedModelError("mlp_bias is not supported")
    gemma = cfg["model_type"] == "gemma3_text"
    if not gemma and cfg.get("hidden_act", "silu") != "silu":
        raise UnsupportedModelError(f"hidden_act {cfg['hidden_act']!r} is not supported (only silu)")
    heads = int(cfg["num_attention_heads"])
    theta, scaling = rope_fields(cfg) if not gemma else (10000.0, None)
    fields = {
        "architecture": cfg["model_type"],
        "vocab_size": int(cfg["vocab_size"]),
        "hidden_size": int(cfg["hidden_size"]),
        "intermediate_size": int(cfg["intermediate_size"]),
        "num_layers": int(cfg["num_hidden_layers"]),
        "num_heads": heads,
        "num_kv_heads": int(cfg.get("num_key_value_heads") or heads),
        "head_dim": int(cfg.get("head_dim") or cfg["hidden_size"] // heads),
        "rms_norm_eps": float(cfg.get("rms_norm_eps", 1e-6)),
        "rope_theta": theta,
        "rope_scaling": scaling,
        "max_context": max_context(cfg),
        "attention_bias": bool(cfg.get("attention_bias", cfg["model_type"] == "qwen2")),
        "tie_word_embeddings": bool(cfg.get("tie_word_embeddings", False)),
        "bos_token_id": cfg.get("bos_token_id"),
        "eos_token_ids": eos_ids(cfg, generation),
    }
    return ModelConfig(**(fields | (gemma3_fields(cfg) if gemma else {})))


def our_name(hf_name: str, arch: str = "llama") -> str:
    name = hf_name.removeprefix("model.")
    for old, new in GEMMA_RENAMES if arch == "gemma3" else RENAMES:
        name = name.replace(old, new)
    return name


def shard_files(folder: Path) -> list[Path]:
    index = read_json(folder / "model.safetensors.index.json")
    if index:
        files = sorted({folder / f for f in index["weight_map"].values()})
    else:
        files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise UnsupportedModelError(f"{folder} has no *.safetensors weights")
    return files


def hf_weights(folder: Path, arch: str) -> dict[str, torch.Tensor]:
    weights = {}
    for file in shard_files(folder):
        weights.update({our_name(k, arch): v for k, v in load_file(file).items()})
    return weights


def load_hf_folder(folder: Path) -> Checkpoint:
    folder = Path(folder)
    config = hf_config(read_json(folder / "config.json"), read_json(folder / "generation_config.json"))
    weights = hf_weights(folder, config.architecture)
    infer_weight_flags(config, weights)
    return Checkpoint(config, weights, build_hf_tokenizer(folder), folder)
