"""`ModelRunner`: the model on its device and dtype, run for one sequence at a time.

Prefill and decode are separate entry points because they are different workloads; both run
under `torch.inference_mode` and return fp32 logits for the next token only.
"""
from __future__ import annotations

import torch

from engine.config import ModelConfig
from engine.kv_cache import KVCache
from engine.layers.attention import AttentionContext
from engine.loader import Checkpoint
from engine.models import LlamaForCausalLM


class ModelRunner:
    def __init__(self, checkpoint: Checkpoint, device: torch.device | str = "cpu",
                 dtype: torch.dtype = torch.float32) -> None:
        self.config: ModelConfig = checkpoint.config
        self.device, self.dtype = torch.device(device), dtype
        self.model = LlamaForCausalLM.build(checkpoint.config, checkpoint.weights, self.device, dtype)

    def new_cache(self, capacity: int) -> KVCache:
        cfg = self.config
        return KVCache(cfg.num_layers, cfg.num_kv_heads, cfg.head_dim, capacity, self.dtype, self.device)

    @torch.inference_mode()
    def prefill(self, token_ids: list[int], cache: KVCache, start: int = 0) -> torch.Tensor:
        """Run `token_ids` (positions start..) into `cache`; return logits [V] after the last one."""
        ids = torch.tensor(token_ids, dtype=torch.long, device=self.device)
        positions = torch.arange(start, start + len(token_ids), device=self.device)
        hidden = self.model(ids, AttentionContext(cache, start, positions))     # [T, D]
        return self.model.compute_logits(hidden[-1:])[0].float()

    @torch.inference_mode()
    def decode(self, token_id: int, position: int, cache: KVCache) -> torch.Tensor:
        """One token at `position` (all earlier positions cached) -> logits [V]."""
        ids = torch.tensor([token_id], dtype=torch.long, device=self.device)
        positions = torch.tensor([position], dtype=torch.long, device=self.device)
        hidden = self.model(ids, AttentionContext(cache, position, positions))  # [1, D]
        return self.model.compute_logits(hidden)[0].float()
