"""`Checkpoint`: what every loader returns, whatever the file format.

Weights use our module names before packing (`layers.3.attn.q_proj.weight`); the model packs them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from engine.config import ModelConfig
from engine.tokenizer import Tokenizer


@dataclass
class Checkpoint:
    config: ModelConfig
    weights: dict[str, torch.Tensor]   # our names -> fp32 (or stored dtype) CPU tensors
    tokenizer: Tokenizer
    path: Path


def infer_weight_flags(config: ModelConfig, weights: dict[str, torch.Tensor]) -> None:
    """Set the flags a checkpoint proves by which tensors it holds (bias, qk-norm, tied head)."""
    config.attention_bias = config.attention_bias or "layers.0.attn.q_proj.bias" in weights
    config.attention_out_bias = "layers.0.attn.o_proj.bias" in weights
    config.qk_norm = config.qk_norm or "layers.0.attn.q_norm.weight" in weights
    config.tie_word_embeddings = config.tie_word_embeddings or "lm_head.weight" not in weights


END_OF_TURN = ("<end_of_turn>", "<|eot_id|>", "<|im_end|>", "<|end|>")   # chat formats' turn ends


def add_stop_tokens(config: ModelConfig, tokenizer: Tokenizer) -> None:
    """A chat format's end-of-turn token stops generation like EOS (Gemma files name only <eos>)."""
    for text in END_OF_TURN:
        token_id = tokenizer.token_to_id(text)
        if token_id is not None and token_id not in config.eos_token_ids:
            config.eos_token_ids.append(token_id)
