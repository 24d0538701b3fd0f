"""cachegate's inference engine: Llama-family models in PyTorch, GGUF and HF loaders, tokenizer and
chat template, sampler, and an asyncio streaming API. Usable without the gateway.
"""
from engine.async_engine import AsyncEngine
from engine.config import EngineConfig, ModelConfig
from engine.errors import ContextLengthError, EmptyPromptError, EngineError, RequestValidationError
from engine.llm_engine import LLMEngine
from engine.outputs import RequestOutput
from engine.sampling_params import SamplingParams

__all__ = [
    "AsyncEngine", "ContextLengthError", "EmptyPromptError", "EngineConfig", "EngineError", "LLMEngine",
    "ModelConfig", "RequestOutput", "RequestValidationError", "SamplingParams",
]
