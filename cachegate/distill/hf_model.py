"""The small model as a trainable transformers model, and back to a folder the engine loads.

`to_transformers` takes the engine's own checkpoint (GGUF dequantized, q/k un-permuted: the weights the
gateway serves) into `LlamaForCausalLM`; `save_folder` writes config.json, model.safetensors and the
engine's tokenizer (tokenizer.json + its chat template), so the folder serves like any HF folder.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import save_file

from engine.loader import Checkpoint

OUR_TO_HF = (("attn_norm.", "input_layernorm."), ("mlp_norm.", "post_attention_layernorm."), ("attn.", "self_attn."))


def hf_name(ours: str) -> str:
    """`layers.3.attn.q_proj.weight` -> `model.layers.3.self_attn.q_proj.weight` (the inverse of the loader's)."""
    if ours.startswith("lm_head."):
        return ours
    for old, new in OUR_TO_HF:
        ours = ours.replace(old, new)
    return "model." + ours


def hf_config(checkpoint: Checkpoint) -> dict:
    c = checkpoint.config
    if c.architecture != "llama" or c.attention_bias or c.qk_norm:
        raise ValueError(f"distillation supports plain Llama-family small models, not {c.architecture!r}")
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": c.vocab_size,
            "hidden_size": c.hidden_size, "intermediate_size": c.intermediate_size,
            "num_hidden_layers": c.num_layers, "num_attention_heads": c.num_heads,
            "num_key_value_heads": c.num_kv_heads, "head_dim": c.head_dim, "rms_norm_eps": c.rms_norm_eps,
            "rope_theta": c.rope_theta, "rope_scaling": c.rope_scaling, "max_position_embeddings": c.max_context,
            "tie_word_embeddings": c.tie_word_embeddings, "hidden_act": "silu", "attention_bias": False,
            "mlp_bias": False, "bos_token_id": c.bos_token_id, "eos_token_id": list(c.eos_token_ids),
            "torch_dtype": "float32"}


def to_transformers(checkpoint: Checkpoint):
    """A float32 `LlamaForCausalLM` holding exactly the checkpoint's weights."""
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(**hf_config(checkpoint))
    with torch.device("meta"):                  # no random init: every weight comes from the checkpoint
        model = LlamaForCausalLM(config)
    weights = {hf_name(k): v.float() for k, v in checkpoint.weights.items()}
    if config.tie_word_embeddings:
        weights.setdefault("lm_head.weight", weights["model.embed_tokens.weight"])
    model.load_state_dict(weights, strict=True, assign=True)
    model.model.rotary_emb = type(model.model.rotary_emb)(config=config)     # its buffers are not weights
    return model.eval()


def save_folder(model, checkpoint: Checkpoint, out: Path, dtype: torch.dtype = torch.bfloat16) -> None:
    """config.json, generation_config.json, model.safetensors (tied head left out) and the tokenizer."""
    out.mkdir(parents=True, exist_ok=True)
    config = hf_config(checkpoint) | {"torch_dtype": str(dtype).removeprefix("torch.")}
    (out / "config.json").write_text(json.dumps(config, indent=1))
    (out / "generation_config.json").write_text(json.dumps(
        {"bos_token_id": config["bos_token_id"], "eos_token_id": config["eos_token_id"]}, indent=1))
    state = {k: v.detach().to(dtype).contiguous() for k, v in model.state_dict().items()
             if not (config["tie_word_embeddings"] and k == "lm_head.weight")}
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    save_tokenizer(checkpoint, out)


def save_tokenizer(checkpoint: Checkpoint, out: Path) -> None:
    tok = checkpoint.tokenizer
    tok.backend.save(str(out / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "chat_template": tok.chat_template,
              "model_max_length": checkpoint.config.max_context, **tok.special_tokens}
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=1, ensure_ascii=False))
