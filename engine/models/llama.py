"""Llama-family decoder: token embedding, blocks (RMSNorm, GQA attention with RoPE, SwiGLU), final
norm and LM head (tied to the embedding when the checkpoint says so).

Tokens are flattened: hidden states are [T, D] for the T new tokens of a step, all requests packed.
Config flags add q/k/v bias (Qwen2) and per-head q/k RMSNorm (Qwen3). KV lives behind `layers.attention`.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from engine.config import ModelConfig
from engine.layers.attention import Attention, ForwardContext
from engine.layers.linear import Linear, PackedLinear, prefers_transposed
from engine.layers.norm import RMSNorm
from engine.layers.rotary import RotaryEmbedding, apply_rotary
from engine.models.weights import materialize

Rope = tuple[torch.Tensor, torch.Tensor]  # cos, signed sin: [T, 1, head_dim] (layers/rotary.py)


class LlamaAttention(nn.Module):
    norm_class = RMSNorm

    def __init__(self, cfg: ModelConfig, layer: int, transposed: bool) -> None:
        super().__init__()
        self.cfg = cfg
        qkv_sizes = [cfg.q_size, cfg.kv_size, cfg.kv_size]
        self.qkv_proj = PackedLinear(cfg.hidden_size, qkv_sizes, cfg.attention_bias, transposed)
        self.o_proj = Linear(cfg.q_size, cfg.hidden_size, cfg.attention_out_bias, transposed)
        if cfg.qk_norm:
            self.q_norm = self.norm_class(cfg.head_dim, cfg.rms_norm_eps)
            self.k_norm = self.norm_class(cfg.head_dim, cfg.rms_norm_eps)
        self.attn = Attention(layer, cfg.num_heads, cfg.num_kv_heads, cfg.head_dim, cfg.attention_scale,
                              cfg.layer_window(layer))

    def forward(self, x: torch.Tensor, rope: Rope, ctx: ForwardContext) -> torch.Tensor:  # x: [T, D]
        t, cfg = x.shape[0], self.cfg
        qkv = self.qkv_proj(x)
        v = qkv[:, cfg.q_size + cfg.kv_size:].view(t, cfg.num_kv_heads, cfg.head_dim)   # [T, Hkv, hd]
        if cfg.qk_norm:
            q, k = qkv[:, :cfg.q_size + cfg.kv_size].split([cfg.q_size, cfg.kv_size], dim=-1)
            q = apply_rotary(self.q_norm(q.view(t, cfg.num_heads, cfg.head_dim)), *rope)     # [T, Hq, hd]
            k = apply_rotary(self.k_norm(k.view(t, cfg.num_kv_heads, cfg.head_dim)), *rope)
        else:   # q and k heads side by side: one rotation for both
            qk = apply_rotary(qkv[:, :cfg.q_size + cfg.kv_size].view(t, -1, cfg.head_dim), *rope)
            q, k = qk[:, :cfg.num_heads], qk[:, cfg.num_heads:]
        return self.o_proj(self.attn(q, k, v, ctx))      # [T, Hq*hd] -> [T, D]


class LlamaMLP(nn.Module):
    def __init__(self, cfg: ModelConfig, transposed: bool) -> None:
        super().__init__()
        self.gate_up_proj = PackedLinear(cfg.hidden_size, [cfg.intermediate_size] * 2, False, transposed)
        self.down_proj = Linear(cfg.intermediate_size, cfg.hidden_size, False, transposed)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [T, D] -> [T, D]
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class LlamaBlock(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int, transposed: bool) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.attn = LlamaAttention(cfg, layer, transposed)
        self.mlp_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = LlamaMLP(cfg, transposed)

    def forward(self, x: torch.Tensor, rope: Rope, ctx: ForwardContext) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), rope, ctx)
        return x + self.mlp(self.mlp_norm(x))


class LlamaForCausalLM(nn.Module):
    def __init__(self, cfg: ModelConfig, transposed: bool = False) -> None:
        """transposed: store linear weights as [in, out] (see layers/linear.py)."""
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([LlamaBlock(cfg, i, transposed) for i in range(cfg.num_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.lm_head = None  # tied: a layer over the embedding matrix, set once loaded (weights.lay_out)
        if not cfg.tie_word_embeddings:
            self.lm_head = Linear(cfg.hidden_size, cfg.vocab_size, False, transposed)
        self.rotary = RotaryEmbedding(cfg.head_dim, cfg.rope_theta, cfg.rope_scaling)

    @classmethod
    def build(cls, cfg: ModelConfig, weights: dict[str, torch.Tensor], device: torch.device | str,
              dtype: torch.dtype) -> LlamaForCausalLM:
        """Allocate on `device` without random init and load `weights`."""
        with torch.device("meta"):
            model = cls(cfg, transposed=prefers_transposed(device, dtype))
        return materialize(model, weights, cfg.tie_word_embeddings, device, dtype)

    def forward(self, input_ids: torch.Tensor, ctx: ForwardContext) -> torch.Tensor:
        """input_ids: [T] -> final hidden states [T, D]."""
        h = self.embed_tokens(input_ids)
        rope = self.rotary.lookup(ctx.positions, h.dtype)
        for layer in self.layers:
            h = layer(h, rope, ctx)
        return self.norm(h)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:  # [N, D] -> [N, V]
        return self.lm_head(hidden)
