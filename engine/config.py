"""`ModelConfig`: the architecture numbers and special ids of one checkpoint, whatever its format.

Loaders (GGUF, HF folder) fill it; the model, tokenizer glue and engine only ever read it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class ModelConfig:
    architecture: str                 # "llama", "qwen2", "qwen3", "mistral" ... (Llama family)
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int                    # query heads
    num_kv_heads: int                 # key/value heads (GQA when fewer than num_heads)
    head_dim: int
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    rope_scaling: dict | None = None  # HF-style dict ({"rope_type": "llama3", "factor": ...}) or None
    max_context: int = 2048           # tokens: prompt + completion
    attention_bias: bool = False      # q/k/v projections carry a bias (Qwen2, some Llamas)
    attention_out_bias: bool = False  # o_proj carries a bias too (Llama with attention_bias)
    qk_norm: bool = False             # per-head RMSNorm on q and k before RoPE (Qwen3)
    tie_word_embeddings: bool = False
    bos_token_id: int | None = None
    eos_token_ids: list[int] = field(default_factory=list)
    name: str = ""

    def __post_init__(self) -> None:
        assert self.num_heads % self.num_kv_heads == 0, "query heads must be a multiple of kv heads"
        assert self.head_dim % 2 == 0, "RoPE needs an even head dim"
        assert self.max_context > 0 and self.vocab_size > 0

    @property
    def q_size(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_size(self) -> int:
        return self.num_kv_heads * self.head_dim


DTYPES = {
    "float32": torch.float32, "fp32": torch.float32, "float": torch.float32,
    "float16": torch.float16, "fp16": torch.float16, "half": torch.float16,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
}


def parse_dtype(dtype: str | torch.dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r} (have {sorted(DTYPES)})")
    return DTYPES[dtype]


@dataclass
class EngineConfig:
    """How to run an engine: which model, on which device, in which dtype (strings are fine, for YAML)."""
    model: str = "smollm2-135m-instruct"   # packaged name, .gguf file or HF folder
    device: str = "cpu"
    dtype: str = "float32"
