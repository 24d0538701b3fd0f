"""Gemma 3 decoder: embeddings scaled by sqrt(hidden), blocks with pre and post norms around both
attention and MLP ((1 + w) RMSNorm), q/k norm, GeGLU (gelu-tanh) MLP, and a layer pattern of
sliding-window layers (local RoPE base) between global ones (global base, with the checkpoint's scaling).

Shares the attention projections and packed linears of the Llama family; tokens are flattened [T, D].
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from engine.config import ModelConfig
from engine.errors import UnsupportedModelError
from engine.layers.attention import ForwardContext
from engine.layers.linear import Linear, PackedLinear, prefers_transposed
from engine.layers.norm import GemmaRMSNorm
from engine.layers.rotary import RotaryEmbedding
from engine.models.llama import LlamaAttention, Rope
from engine.models.weights import materialize

ACTIVATIONS = {"gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu}


class GemmaAttention(LlamaAttention):
    norm_class = GemmaRMSNorm


class GemmaMLP(nn.Module):
    def __init__(self, cfg: ModelConfig, transposed: bool) -> None:
        super().__init__()
        if cfg.hidden_act not in ACTIVATIONS:
            raise UnsupportedModelError(f"activation {cfg.hidden_act!r} is not supported")
        self.act = ACTIVATIONS[cfg.hidden_act]
        self.gate_up_proj = PackedLinear(cfg.hidden_size, [cfg.intermediate_size] * 2, False, transposed)
        self.down_proj = Linear(cfg.intermediate_size, cfg.hidden_size, False, transposed)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [T, D] -> [T, D]
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(self.act(gate) * up)


class GemmaBlock(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int, transposed: bool) -> None:
        super().__init__()
        self.sliding = cfg.layer_window(layer) > 0
        eps, d = cfg.rms_norm_eps, cfg.hidden_size
        self.attn_norm, self.post_attn_norm = GemmaRMSNorm(d, eps), GemmaRMSNorm(d, eps)
        self.mlp_norm, self.post_mlp_norm = GemmaRMSNorm(d, eps), GemmaRMSNorm(d, eps)
        self.attn = GemmaAttention(cfg, layer, transposed)
        self.mlp = GemmaMLP(cfg, transposed)

    def forward(self, x: torch.Tensor, rope: Rope, ctx: ForwardContext) -> torch.Tensor:
        x = x + self.post_attn_norm(self.attn(self.attn_norm(x), rope, ctx))
        return x + self.post_mlp_norm(self.mlp(self.mlp_norm(x)))


class Gemma3ForCausalLM(nn.Module):
    def __init__(self, cfg: ModelConfig, transposed: bool = False) -> None:
        super().__init__()
        assert cfg.tie_word_embeddings, "Gemma 3 ties its LM head to the embedding"
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([GemmaBlock(cfg, i, transposed) for i in range(cfg.num_layers)])
        self.norm = GemmaRMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.lm_head = None   # a layer over the embedding matrix, set once loaded (weights.lay_out)
        self.global_rotary = RotaryEmbedding(cfg.head_dim, cfg.rope_theta, cfg.rope_scaling)
        self.local_rotary = RotaryEmbedding(cfg.head_dim, cfg.rope_local_theta or cfg.rope_theta, None)

    @classmethod
    def build(cls, cfg: ModelConfig, weights: dict[str, torch.Tensor], device: torch.device | str,
              dtype: torch.dtype) -> Gemma3ForCausalLM:
        with torch.device("meta"):
            model = cls(cfg, transposed=prefers_transposed(device, dtype))
        return materialize(model, weights, True, device, dtype)

    def forward(self, input_ids: torch.Tensor, ctx: ForwardContext) -> torch.Tensor:
        """input_ids: [T] -> final hidden states [T, D]."""
        h = self.embed_tokens(input_ids)
        h = h * torch.tensor(self.cfg.hidden_size ** 0.5, dtype=h.dtype)
        global_rope = self.global_rotary.lookup(ctx.positions, h.dtype)
        local_rope = self.local_rotary.lookup(ctx.positions, h.dtype)
        for layer in self.layers:
            h = layer(h, local_rope if layer.sliding else global_rope, ctx)
        return self.norm(h)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:  # [N, D] -> [N, V]
        return self.lm_head(hidden)
