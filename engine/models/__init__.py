"""Model code: one Llama-family implementation (SmolLM2, Llama 2/3, Mistral, Qwen2/3 through config
flags) and Gemma 3. `model_class(config)` picks the implementation for a checkpoint."""
from __future__ import annotations

from engine.config import ModelConfig
from engine.models.gemma3 import Gemma3ForCausalLM
from engine.models.llama import LlamaForCausalLM

__all__ = ["Gemma3ForCausalLM", "LlamaForCausalLM", "model_class"]


def model_class(cfg: ModelConfig) -> type:
    return Gemma3ForCausalLM if cfg.architecture == "gemma3" else LlamaForCausalLM
