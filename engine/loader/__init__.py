"""Loading a checkpoint: resolve a spec to a path, then read config, weights and tokenizer from it.

`load_checkpoint(spec)` is the entry point; GGUF files and HF folders give the same `Checkpoint`.
"""
from __future__ import annotations

from pathlib import Path

from engine.loader.checkpoint import Checkpoint
from engine.loader.gguf_file import load_gguf
from engine.loader.hf_folder import load_hf_folder
from engine.loader.resolve import DEFAULT_MODEL, model_name_for, resolve_model_path

__all__ = ["DEFAULT_MODEL", "Checkpoint", "load_checkpoint", "resolve_model_path"]


def load_checkpoint(spec: str | Path = DEFAULT_MODEL) -> Checkpoint:
    path = resolve_model_path(spec)
    checkpoint = load_gguf(path) if path.suffix == ".gguf" else load_hf_folder(path)
    checkpoint.config.name = model_name_for(spec, path)
    return checkpoint
