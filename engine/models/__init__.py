"""Model code. One Llama-family implementation covers SmolLM2, Llama 2/3, Mistral and Qwen2/3
through config flags."""
from engine.models.llama import LlamaForCausalLM

__all__ = ["LlamaForCausalLM"]
