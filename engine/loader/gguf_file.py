"""Reading a GGUF checkpoint: `ModelConfig` from its metadata, dequantized tensors under our names.

Quantized tensors are dequantized to fp32 with the `gguf` package; llama.cpp's q/k row permutation
is undone for llama-arch files; a missing output.weight means tied embeddings. Gemma 3 files store
norm weights as 1 + w (we keep HF's w) and leave out what llama.cpp hard-codes: the layer pattern
(5 sliding layers, then a global one), the local RoPE base 10000 and query_pre_attn_scalar = head_dim.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from gguf.quants import dequantize

from engine.config import FULL, SLIDING, ModelConfig
from engine.errors import UnsupportedModelError
from engine.loader.cache_dir import cache_dir, file_key
from engine.loader.checkpoint import Checkpoint, add_stop_tokens, infer_weight_flags
from engine.loader.gguf_reader import GGUFTensor, read_gguf
from engine.loader.gguf_tokenizer import build_gguf_tokenizer
from engine.loader.permute import unpermute_qk

TOP_NAMES = {"token_embd": "embed_tokens", "output_norm": "norm", "output": "lm_head"}
BLOCK_NAMES = {
    "attn_norm": "attn_norm", "ffn_norm": "mlp_norm",
    "attn_q": "attn.q_proj", "attn_k": "attn.k_proj", "attn_v": "attn.v_proj", "attn_output": "attn.o_proj",
    "attn_q_norm": "attn.q_norm", "attn_k_norm": "attn.k_norm",
    "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
}
GEMMA_BLOCK_NAMES = BLOCK_NAMES | {"post_attention_norm": "post_attn_norm", "post_ffw_norm": "post_mlp_norm"}
PERMUTED_ARCHS = {"llama"}  # llama.cpp's converter permutes q/k only for these
SUPPORTED = {"llama", "mistral", "qwen2", "qwen3", "gemma3"}
GEMMA3_PATTERN = 6          # every 6th layer is global (llama.cpp: LLM_ARCH_GEMMA3 swa pattern)
GEMMA3_LOCAL_THETA = 10000.0


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


def gemma3_fields(meta: dict, layers: int, head_dim: int) -> dict:
    kinds = [FULL if (i + 1) % GEMMA3_PATTERN == 0 else SLIDING for i in range(layers)]
    return {"sliding_window": int(meta.get("gemma3.attention.sliding_window", 0)), "layer_types": kinds,
            "rope_local_theta": GEMMA3_LOCAL_THETA, "query_pre_attn_scalar": float(head_dim),
            "hidden_act": "gelu_pytorch_tanh", "tie_word_embeddings": True}


def gguf_config(meta: dict) -> ModelConfig:
    arch = meta["general.architecture"]
    if arch not in SUPPORTED:
        raise UnsupportedModelError(f"GGUF architecture {arch!r} is not supported (have {sorted(SUPPORTED)})")

    def p(key: str, default=None):
        return meta.get(f"{arch}.{key}", default)

    heads = int(p("attention.head_count"))
    hidden = int(p("embedding_length"))
    layers = int(p("block_count"))
    head_dim = int(p("attention.key_length", hidden // heads))
    extra = gemma3_fields(meta, layers, head_dim) if arch == "gemma3" else {}
    kv_heads = p("attention.head_count_kv", heads)
    if not isinstance(kv_heads, int):
        raise UnsupportedModelError("per-layer kv head counts are not supported")
    return ModelConfig(
        architecture=arch,
        vocab_size=int(p("vocab_size") or len(meta["tokenizer.ggml.tokens"])),
        hidden_size=hidden,
        intermediate_size=int(p("feed_forward_length")),
        num_layers=layers,
        num_heads=heads,
        num_kv_heads=int(kv_heads),
        head_dim=head_dim,
        rms_norm_eps=float(p("attention.layer_norm_rms_epsilon", 1e-5)),
        rope_theta=float(p("rope.freq_base", 10000.0)),
        rope_scaling=rope_scaling(meta, arch),
        max_context=int(p("context_length", 2048)),
        bos_token_id=meta.get("tokenizer.ggml.bos_token_id"),
        eos_token_ids=eos_ids(meta),
        name=str(meta.get("general.name", "")),
        **extra,
    )


def our_name(gguf_name: str, arch: str = "llama") -> str:
    """`blk.3.attn_q.weight` -> `layers.3.attn.q_proj.weight`; `output_norm.weight` -> `norm.weight`."""
    parts = gguf_name.split(".")
    names = GEMMA_BLOCK_NAMES if arch == "gemma3" else BLOCK_NAMES
    if parts[0] == "blk" and len(parts) == 4 and parts[2] in names:
        return f"layers.{parts[1]}.{names[parts[2]]}.{parts[3]}"
    if len(parts) == 2 and parts[0] in TOP_NAMES:
        return f"{TOP_NAMES[parts[0]]}.{parts[1]}"
    raise UnsupportedModelError(f"GGUF tensor {gguf_name!r} has no place in our Llama model")


def dequantized(tensor) -> torch.Tensor:
    """One GGUF tensor -> fp32 torch tensor in torch's [out, in] order."""
    shape = tuple(reversed([int(d) for d in tensor.shape]))
    array = np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32).reshape(shape)
    return torch.from_numpy(array if array.flags.writeable else array.copy())


def gguf_weights(tensors: list[GGUFTensor], config: ModelConfig) -> dict[str, torch.Tensor]:
    weights = {}
    for tensor in tensors:
        name, w = our_name(tensor.name, config.architecture), dequantized(tensor)
        if config.architecture == "gemma3" and name.endswith("norm.weight"):
            w = w - 1.0                       # stored as 1 + w; GemmaRMSNorm scales by (1 + w)
        permuted = config.architecture in PERMUTED_ARCHS
        if permuted and name.endswith(("attn.q_proj.weight", "attn.q_proj.bias")):
            w = unpermute_qk(w, config.num_heads)
        if permuted and name.endswith(("attn.k_proj.weight", "attn.k_proj.bias")):
            w = unpermute_qk(w, config.num_kv_heads)
        weights[name] = w
    return weights


def load_gguf(path: Path) -> Checkpoint:
    meta, tensors = read_gguf(path)
    config = gguf_config(meta)
    weights = gguf_weights(tensors, config)
    infer_weight_flags(config, weights)
    assert weights["embed_tokens.weight"].shape == (config.vocab_size, config.hidden_size)
    tokenizer_json = cache_dir("tokenizers") / f"{file_key(path)}.json"
    tokenizer = build_gguf_tokenizer(meta, tokenizer_json)
    add_stop_tokens(config, tokenizer)
    return Checkpoint(config, weights, tokenizer, Path(path))
