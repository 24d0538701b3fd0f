"""cachegate's inference engine: Llama-family models in PyTorch, GGUF and HF loaders, tokenizer and
chat template, sampler, and an asyncio streaming API. Usable without the gateway.

Exports load lazily, so `from engine.sampling_params import SamplingParams` does not import torch.
OMP_WAIT_POLICY defaults to PASSIVE (when this package loads before torch): on shared cores, OpenMP
threads that spin-wait for a preempted sibling made a 2-thread decode step ten times slower.
"""
from __future__ import annotations

import importlib
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

EXPORTS = {
    "AsyncEngine": "engine.async_engine",
    "LLMEngine": "engine.llm_engine",
    "EngineConfig": "engine.config",
    "ModelConfig": "engine.config",
    "RequestOutput": "engine.outputs",
    "SamplingParams": "engine.sampling_params",
    "EngineError": "engine.errors",
    "RequestValidationError": "engine.errors",
    "ContextLengthError": "engine.errors",
    "EmptyPromptError": "engine.errors",
}
__all__ = [  # provided by __getattr__
    "AsyncEngine", "ContextLengthError", "EmptyPromptError", "EngineConfig", "EngineError", "LLMEngine",
    "ModelConfig", "RequestOutput", "RequestValidationError", "SamplingParams",
]


def __getattr__(name: str):
    if name not in EXPORTS:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    return getattr(importlib.import_module(EXPORTS[name]), name)
