"""Engine fixtures: the packaged SmolLM2 GGUF loaded once per session, by us and by transformers
(the reference), so every parity test shares one copy of each; `engine_for` builds engines with their
own KV pool and scheduler settings around one shared copy of the model.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # before torch loads OpenMP (see engine/__init__.py)

from pathlib import Path

import pytest
import torch

from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.loader import Checkpoint, load_checkpoint, resolve_model_path
from engine.model_runner import ModelRunner

os.environ.setdefault("HF_HUB_OFFLINE", "1")
MODEL = "smollm2-135m-instruct"
MODELS: dict[int, torch.nn.Module] = {}   # id(checkpoint) -> built model, shared by test engines


def engine_for(checkpoint: Checkpoint, **options) -> LLMEngine:
    """An engine on `checkpoint` with `options` (EngineConfig fields; 256 KV blocks unless given)."""
    config = EngineConfig(**({"num_kv_blocks": 256} | options))
    model = MODELS.get(id(checkpoint))
    runner = ModelRunner(checkpoint, config, model)
    MODELS[id(checkpoint)] = runner.model
    return LLMEngine(runner, checkpoint.tokenizer, checkpoint.config.name)


@pytest.fixture(scope="session")
def gguf_path() -> Path:
    return resolve_model_path(MODEL)


@pytest.fixture(scope="session")
def checkpoint() -> Checkpoint:
    return load_checkpoint(MODEL)


@pytest.fixture(scope="session")
def llm(checkpoint) -> LLMEngine:
    return engine_for(checkpoint, num_kv_blocks=512)    # 8192 tokens: the full context of SmolLM2


@pytest.fixture(scope="session")
def tokenizer(checkpoint):
    return checkpoint.tokenizer


@pytest.fixture(scope="session")
def hf_tokenizer(gguf_path):
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)


@pytest.fixture(scope="session")
def hf_model(gguf_path):
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name,
                                                 dtype=torch.float32)
    return model.eval()
