"""`KVPool`: the preallocated K/V tensor of one model, [layers, 2, blocks, block_size, kv_heads, head_dim],
and how many blocks it gets (a count, a byte budget on CPU, or a share of free GPU memory). On Linux the
CPU pool asks for transparent huge pages (decode reads blocks scattered over it: fewer TLB misses).
"""
from __future__ import annotations

import ctypes
import sys

import torch

from engine.config import EngineConfig, ModelConfig

CPU_DEFAULT_GIB = 0.5


class KVPool:
    def __init__(self, cfg: ModelConfig, num_blocks: int, block_size: int, dtype: torch.dtype,
                 device: torch.device | str) -> None:
        """`num_blocks` for requests, plus one spare block past them that no request ever owns (the
        padding rows of a CUDA graph write there)."""
        assert num_blocks > 0 and block_size > 0
        self.num_blocks, self.block_size = num_blocks, block_size
        self.spare_block = num_blocks
        shape = (cfg.num_layers, 2, num_blocks + 1, block_size, cfg.num_kv_heads, cfg.head_dim)
        # written through up front (a preallocated pool: memory use does not grow with traffic), and zeros,
        # so slots never written read as finite numbers
        self.kv = torch.empty(shape, dtype=dtype, device=device)
        if self.kv.device.type == "cpu":
            advise_huge_pages(self.kv)
        self.kv.zero_()

    def k(self, layer: int) -> torch.Tensor:   # [blocks, block_size, kv_heads, head_dim]
        return self.kv[layer, 0]

    def v(self, layer: int) -> torch.Tensor:
        return self.kv[layer, 1]

    @property
    def nbytes(self) -> int:
        return self.kv.numel() * self.kv.element_size()


def advise_huge_pages(t: torch.Tensor) -> None:
    """madvise(MADV_HUGEPAGE) over the 2 MiB-aligned part of an untouched CPU tensor (Linux; else nothing)."""
    if not sys.platform.startswith("linux"):
        return
    huge, start = 1 << 21, t.data_ptr()
    first, last = -(-start // huge) * huge, (start + t.numel() * t.element_size()) // huge * huge
    if last > first:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.madvise(ctypes.c_void_p(first), ctypes.c_size_t(last - first), 14)   # MADV_HUGEPAGE
        except (OSError, AttributeError):
            pass


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
