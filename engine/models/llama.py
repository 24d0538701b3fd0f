"""Llama-family decoder: token embedding, blocks (RMSNorm, GQA attention with RoPE, SwiGLU), final
norm and LM head (tied to the embedding when the checkpoint says so).

Tokens are flattened: hidden states are [T, D] for the T new tokens of one sequence. Config flags add
q/k/v bias (Qwen2) and per-head q/k RMSNorm (Qwen3). KV handling lives behind `layers.attention`.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from engine.config import ModelConfig
from engine.layers.attention import Attention, AttentionContext
from engine.layers.linear import Linear, PackedLinear, prefers_transposed
from engine.layers.norm import RMSNorm
from engine.layers.rotary import RotaryEmbedding, apply_rotary

Rope = tuple[torch.Tensor, torch.Tensor]  # cos, sin: [T, 1, head_dim]
PACKED = {  # checkpoint projection -> (our packed module, shard index)
    "q_proj": ("qkv_proj", 0), "k_proj": ("qkv_proj", 1), "v_proj": ("qkv_proj", 2),
    "gate_proj": ("gate_up_proj", 0), "up_proj": ("gate_up_proj", 1),
}


class LlamaAttention(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int, transposed: bool) -> None:
        super().__init__()
        self.cfg = cfg
        qkv_sizes = [cfg.q_size, cfg.kv_size, cfg.kv_size]
        self.qkv_proj = PackedLinear(cfg.hidden_size, qkv_sizes, cfg.attention_bias, transposed)
        self.o_proj = Linear(cfg.q_size, cfg.hidden_size, cfg.attention_out_bias, transposed)
        if cfg.qk_norm:
            self.q_norm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps)
            self.k_norm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps)
        self.attn = Attention(layer, cfg.num_heads, cfg.num_kv_heads, cfg.head_dim)

    def forward(self, x: torch.Tensor, rope: Rope, ctx: AttentionContext) -> torch.Tensor:  # x: [T, D]
        t, cfg = x.shape[0], self.cfg
        q, k, v = self.qkv_proj(x).split([cfg.q_size, cfg.kv_size, cfg.kv_size], dim=-1)
        q = q.view(t, cfg.num_heads, cfg.head_dim)       # [T, Hq, hd]
        k = k.view(t, cfg.num_kv_heads, cfg.head_dim)    # [T, Hkv, hd]
        v = v.view(t, cfg.num_kv_heads, cfg.head_dim)
        if cfg.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = apply_rotary(q, *rope), apply_rotary(k, *rope)
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

    def forward(self, x: torch.Tensor, rope: Rope, ctx: AttentionContext) -> torch.Tensor:
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
        self.lm_head = None  # tied: logits reuse the embedding matrix
        if not cfg.tie_word_embeddings:
            self.lm_head = Linear(cfg.hidden_size, cfg.vocab_size, False, transposed)
        self.rotary = RotaryEmbedding(cfg.head_dim, cfg.max_context, cfg.rope_theta, cfg.rope_scaling)

    @classmethod
    def build(cls, cfg: ModelConfig, weights: dict[str, torch.Tensor], device: torch.device | str,
              dtype: torch.dtype) -> LlamaForCausalLM:
        """Allocate on `device` without random init, load `weights`, fill the RoPE tables."""
        with torch.device("meta"):
            model = cls(cfg, transposed=prefers_transposed(device, dtype))
        model = model.to_empty(device=device).to(dtype)
        model.rotary.reset_tables()
        model.load_weights(weights)
        return model.eval().requires_grad_(False)

    def load_weights(self, weights: dict[str, torch.Tensor]) -> None:
        """Copy checkpoint tensors (our names, unpacked, [out, in]) into the model; all must be covered."""
        params = dict(self.named_parameters())
        pending = {name: p.numel() for name, p in params.items()}  # elements still to fill
        for name, w in weights.items():
            if name == "lm_head.weight" and self.lm_head is None:
                continue
            module, kind = name.rsplit(".", 1)                     # "layers.3.attn.q_proj", "weight"
            parent, _, proj = module.rpartition(".")
            packed, index = PACKED.get(proj, (proj, 0))
            target_name = f"{parent}.{packed}" if parent else packed
            target = self.get_submodule(target_name)
            if isinstance(target, Linear):
                target.load(kind, w, index)
                name = f"{target_name}.{kind}"
            else:
                assert params[name].shape == w.shape, \
                    f"{name}: {tuple(w.shape)} != {tuple(params[name].shape)}"
                params[name].data.copy_(w)
            pending[name] -= w.numel()
        missing = [name for name, left in pending.items() if left != 0]
        assert not missing, f"checkpoint lacks (or overfills) {missing[:5]}"

    def forward(self, input_ids: torch.Tensor, ctx: AttentionContext) -> torch.Tensor:
        """input_ids: [T] -> final hidden states [T, D]."""
        h = self.embed_tokens(input_ids)
        rope = self.rotary.lookup(ctx.positions)
        for layer in self.layers:
            h = layer(h, rope, ctx)
        return self.norm(h)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:  # [N, D] -> [N, V]
        if self.lm_head is None:  # tied: reuse the embedding matrix [V, D]
            return F.linear(hidden, self.embed_tokens.weight)
        return self.lm_head(hidden)
