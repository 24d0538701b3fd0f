"""`ModelConfig`: the architecture numbers and special ids of one checkpoint, whatever its format;
`EngineConfig`: how an engine runs it (device, dtype, KV pool size, scheduler budgets, prefix cache).

Loaders (GGUF, HF folder) fill `ModelConfig`; the model, tokenizer glue and engine only ever read it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

SLIDING, FULL = "sliding_attention", "full_attention"   # layer kinds (HF's `layer_types` spelling)


@dataclass
class ModelConfig:
    architecture: str                 # "llama", "qwen2", "qwen3", "mistral" (Llama family) or "gemma3"
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
    qk_norm: bool = False             # per-head RMSNorm on q and k before RoPE (Qwen3, Gemma 3)
    tie_word_embeddings: bool = False
    bos_token_id: int | None = None
    eos_token_ids: list[int] = field(default_factory=list)
    name: str = ""
    # Gemma 3: sliding-window layers with their own RoPE base, between global ones
    sliding_window: int = 0           # tokens a sliding layer sees (0 = none)
    layer_types: list[str] | None = None      # per layer SLIDING or FULL; None = all FULL
    rope_local_theta: float | None = None     # RoPE base of the sliding layers (None = rope_theta)
    query_pre_attn_scalar: float | None = None  # attention scale = this ** -0.5 (None = head_dim)
    hidden_act: str = "silu"          # "silu" (SwiGLU) or "gelu_pytorch_tanh" (GeGLU)

    def __post_init__(self) -> None:
        assert self.num_heads % self.num_kv_heads == 0, "query heads must be a multiple of kv heads"
        assert self.head_dim % 2 == 0, "RoPE needs an even head dim"
        assert self.max_context > 0 and self.vocab_size > 0
        assert self.layer_types is None or len(self.layer_types) == self.num_layers

    @property
    def q_size(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_size(self) -> int:
        return self.num_kv_heads * self.head_dim

    @property
    def attention_scale(self) -> float:
        return (self.query_pre_attn_scalar or self.head_dim) ** -0.5

    def layer_window(self, layer: int) -> int:
        """Sliding window of `layer` in tokens, 0 for a global layer."""
        if self.layer_types is None or self.layer_types[layer] != SLIDING:
            return 0
        return self.sliding_window


DTYPES = {
    "float32": torch.float32, "fp32": torch.float32, "float": torch.float32,
    "float16": torch.float16, "fp16": torch.float16, "half": torch.float16,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
}


def auto_dtype(device: torch.device | str) -> torch.dtype:
    """The fastest dtype the device computes well: bfloat16 on GPUs that have it and on CPUs with
    bf16 instructions (avx512_bf16, AMX: batched matmuls 3-5x faster than float32), else float32
    (float16 on older GPUs)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.bfloat16 if device.type == "cpu" and cpu_has_native_bf16() else torch.float32


def cpu_has_native_bf16() -> bool:
    """oneDNN's answer: the CPU has bf16 dot-product instructions (avx512_bf16 or AMX)."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def dtype_name(dtype: str | torch.dtype) -> str:
    """torch.bfloat16 -> "bfloat16" (names pass through)."""
    return str(dtype).removeprefix("torch.")


def parse_dtype(dtype: str | torch.dtype, device: torch.device | str = "cpu") -> torch.dtype:
    """A dtype or its name; "auto" resolves for `device` (see `auto_dtype`)."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype == "auto":
        return auto_dtype(device)
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r} (have {sorted(DTYPES)})")
    return DTYPES[dtype]


@dataclass
class EngineConfig:
    """How to run an engine (strings are fine, for YAML). Names follow vLLM's where one exists."""
    model: str = "smollm2-135m-instruct"   # packaged name, .gguf file or HF folder
    device: str = "cpu"
    dtype: str = "float32"                  # or "bfloat16", "float16", "auto" (see auto_dtype)
    block_size: int = 16                   # tokens per KV block
    num_kv_blocks: int | None = None       # pool size; None = from kv_cache_gib (CPU) or memory fraction (GPU)
    kv_cache_gib: float | None = None      # pool bytes on CPU (None = 1 GiB, at least one full context)
    gpu_memory_utilization: float = 0.85   # GPU: share of free memory (after weights) the pool takes
    max_num_seqs: int = 64                 # running requests at once
    max_waiting: int = 256                 # queued requests past this are refused (EngineOverloadedError)
    max_num_batched_tokens: int = 512      # tokens per step: decodes + prefill chunks (chunked prefill)
    max_model_len: int | None = None       # context cap below the model's own (None = the model's)
    enable_prefix_caching: bool = True
    share_prefix_across_tenants: bool = False   # tenants reuse each other's prefixes (timing side channel)
    num_threads: int | None = None         # torch intra-op threads (process-wide; None = leave as is)
    attention_backend: str = "auto"        # auto | torch | cpu (C decode kernel) | triton
    check_integrity: bool = True           # check the block accounting whenever the engine goes idle
    compile: bool = False                  # torch.compile each decoder layer (CPU; see engine/compile.py)
    cuda_graphs: bool = False              # CUDA: decode steps replay graphs captured per batch-size bucket

    def __post_init__(self) -> None:
        assert self.block_size > 0 and self.max_num_seqs > 0 and self.max_waiting > 0
        assert self.max_num_batched_tokens > 0, "decodes always run; prefill chunks share what they leave"
        assert 0 < self.gpu_memory_utilization <= 1
