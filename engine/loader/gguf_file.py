"""Reading a GGUF checkpoint: `ModelConfig` from its metadata, dequantized tensors under our names.

Quantized tensors are dequantized to fp32 with the `gguf` package; llama.cpp's q/k row permutation
is undone for llama-arch files; a missing output.weight means tied embeddings.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from gguf import GGUFReader
from gguf.quants import dequantize

from engine.config import ModelConfig
from engine.errors import UnsupportedModelError
from engine.loader.checkpoint import Checkpoint, infer_weight_flags
from engine.loader.gguf_tokenizer import build_gguf_tokenizer
from engine.loader.permute import unpermute_qk

TOP_NAMES = {"token_embd": "embed_tokens", "output_norm": "norm", "output": "lm_head"}
BLOCK_NAMES = {
    "attn_norm": "attn_norm", "ffn_norm": "mlp_norm",
    "attn_q": "attn.q_proj", "attn_k": "attn.k_proj", "attn_v": "attn.v_proj", "attn_output": "attn.o_proj",
    "attn_q_norm": "attn.q_norm", "attn_k_norm": "attn.k_norm",
    "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
}
PERMUTED_ARCHS = {"llama"}  # llama.cpp's converter permutes q/k only for these


def read_metadata(reader: GGUFReader) -> dict:
    return {key: f.contents() for key, f in reader.fields.items()}


def rope_scaling(meta: dict, arch: str) -> dict | None:
    kind = meta.get(f"{arch}.rope.scaling.type")
    if kind in (None, "none"):
        return None
    scaling = {"rope_type": kind, "factor": float(meta.get(f"{arch}.rope.scaling.factor", 1.0))}
    if (original := meta.get(f"{arch}.rope.scaling.original_context_length")) is not None:
        scaling["original_max_position_embeddings"] = int(original)
    return scaling


def eos_ids(meta: dict) -> list[int]:
    keys = ("eos_token_id", "eot_token_id", "eom_token_id")
    ids = [meta[f"tokenizer.ggml.{k}"] for k in keys if meta.get(f"tokenizer.ggml.{k}") is not None]
    return list(dict.fromkeys(int(i) for i in ids))


def gguf_config(meta: dict) -> ModelConfig:
    arch = meta["general.architecture"]

    def p(key: str, default=None):
        return meta.get(f"{arch}.{key}", default)

    heads = int(p("attention.head_count"))
    hidden = int(p("embedding_length"))
    kv_heads = p("attention.head_count_kv", heads)
    if not isinstance(kv_heads, int):
        raise UnsupportedModelError("per-layer kv head counts are not supported")
    return ModelConfig(
        architecture=arch,
        vocab_size=int(p("vocab_size") or len(meta["tokenizer.ggml.tokens"])),
        hidden_size=hidden,
        intermediate_size=int(p("feed_forward_length")),
        num_layers=int(p("block_count")),
        num_heads=heads,
        num_kv_heads=int(kv_heads),
        head_dim=int(p("attention.key_length", hidden // heads)),
        rms_norm_eps=float(p("attention.layer_norm_rms_epsilon", 1e-5)),
        rope_theta=float(p("rope.freq_base", 10000.0)),
        rope_scaling=rope_scaling(meta, arch),
        max_context=int(p("context_length", 2048)),
        bos_token_id=meta.get("tokenizer.ggml.bos_token_id"),
        eos_token_ids=eos_ids(meta),
        name=str(meta.get("general.name", "")),
    )


def our_name(gguf_name: str) -> str:
    """`blk.3.attn_q.weight` -> `layers.3.attn.q_proj.weight`; `output_norm.weight` -> `norm.weight`."""
    parts = gguf_name.split(".")
    if parts[0] == "blk" and len(parts) == 4 and parts[2] in BLOCK_NAMES:
        return f"layers.{parts[1]}.{BLOCK_NAMES[parts[2]]}.{parts[3]}"
    if len(parts) == 2 and parts[0] in TOP_NAMES:
        return f"{TOP_NAMES[parts[0]]}.{parts[1]}"
    raise UnsupportedModelError(f"GGUF tensor {gguf_name!r} has no place in our Llama model")


def dequantized(tensor) -> torch.Tensor:
    """One GGUF tensor -> fp32 torch tensor in torch's [out, in] order."""
    shape = tuple(reversed([int(d) for d in tensor.shape]))
    array = np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32).reshape(shape)
    return torch.from_numpy(array.copy())


def gguf_weights(reader: GGUFReader, config: ModelConfig) -> dict[str, torch.Tensor]:
    weights = {}
    for tensor in reader.tensors:
        name, w = our_name(tensor.name), dequantized(tensor)
        permuted = config.architecture in PERMUTED_ARCHS
        if permuted and name.endswith(("attn.q_proj.weight", "attn.q_proj.bias")):
            w = unpermute_qk(w, config.num_heads)
        if permuted and name.endswith(("attn.k_proj.weight", "attn.k_proj.bias")):
            w = unpermute_qk(w, config.num_kv_heads)
        weights[name] = w
    return weights


def load_gguf(path: Path) -> Checkpoint:
    reader = GGUFReader(path)
    meta = read_metadata(reader)
    config = gguf_config(meta)
    weights = gguf_weights(reader, config)
    infer_weight_flags(config, weights)
    assert weights["embed_tokens.weight"].shape == (config.vocab_size, config.hidden_size)
    return Checkpoint(config, weights, build_gguf_tokenizer(meta), Path(path))
