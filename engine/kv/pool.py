"""`KVPool`: the preallocated K/V tensor of one model, [layers, 2, blocks, block_size, kv_heads, head_dim],
and how many blocks it gets (a count, a byte budget on CPU, or a share of free GPU memory).
"""
from __future__ import annotations

import torch

from engine.config import EngineConfig, ModelConfig

CPU_DEFAULT_GIB = 0.5


class KVPool:
    def __init__(self, cfg: ModelConfig, num_blocks: int, block_size: int, dtype: torch.dtype,
                 device: torch.device | str) -> None:
        assert num_blocks > 0 and block_size > 0
        self.num_blocks, self.block_size = num_blocks, block_size
        shape = (cfg.num_layers, 2, num_blocks, block_size, cfg.num_kv_heads, cfg.head_dim)
        # written through up front (a preallocated pool: memory use does not grow with traffic), and zeros,
        # so slots never written read as finite numbers
        self.kv = torch.zeros(shape, dtype=dtype, device=device)

    def k(self, layer: int) -> torch.Tensor:   # [blocks, block_size, kv_heads, head_dim]
        return self.kv[layer, 0]

    def v(self, layer: int) -> torch.Tensor:
        return self.kv[layer, 1]

    @property
    def nbytes(self) -> int:
        return self.kv.numel() * self.kv.element_size()


def bytes_per_block(cfg: ModelConfig, block_size: int, dtype: torch.dtype) -> int:
    return cfg.num_layers * 2 * block_size * cfg.kv_size * torch.finfo(dtype).bits // 8


def pool_blocks(cfg: ModelConfig, engine: EngineConfig, dtype: torch.dtype, device: torch.device) -> int:
    """Blocks for the pool: `num_kv_blocks` if set; on CUDA a share of the free memory; else a byte
    budget (`kv_cache_gib`, default 0.5 GiB)."""
    if engine.num_kv_blocks:
        return engine.num_kv_blocks
    per_block = bytes_per_block(cfg, engine.block_size, dtype)
    if device.type == "cuda" and engine.kv_cache_gib is None:
        free, _ = torch.cuda.mem_get_info(device)
        budget = free * engine.gpu_memory_utilization
    else:
        budget = (engine.kv_cache_gib or CPU_DEFAULT_GIB) * 2**30
    return max(1, int(budget // per_block))
