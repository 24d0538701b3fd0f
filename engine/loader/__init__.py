"""Loading a checkpoint: resolve a spec to a path, then read config, weights and tokenizer from it.

`load_checkpoint(spec)` is the entry point; GGUF files and HF folders give the same `Checkpoint`.
"""
from __future__ import annotations

import logging
from pathlib import Path

from engine.loader.checkpoint import Checkpoint
from engine.loader.gguf_file import load_gguf
from engine.loader.hf_folder import load_hf_folder
from engine.loader.resolve import DEFAULT_MODEL, model_name_for, resolve_model_path

__all__ = ["DEFAULT_MODEL", "Checkpoint", "load_checkpoint", "resolve_model_path"]
log = logging.getLogger(__name__)


def load_checkpoint(spec: str | Path = DEFAULT_MODEL) -> Checkpoint:
    path = resolve_model_path(spec)
    checkpoint = load_gguf(path) if path.suffix == ".gguf" else load_hf_folder(path)
    checkpoint.config.name = model_name_for(spec, path)
    if not checkpoint.tokenizer.chat_template:
        checkpoint.tokenizer.use_fallback_template()
        log.info("%s has no chat template (a base model): chat requests use a plain Question/Answer "
                 "transcript and stop at %r", checkpoint.config.name, checkpoint.tokenizer.chat_stop)
    return checkpoint
