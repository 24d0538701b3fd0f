"""Masking a batch's logits: one bitmask for the rows that carry a grammar, filled by their matchers,
applied in one call (xgrammar's CPU kernel, or its GPU kernel on CUDA). Rows without a grammar are
left untouched.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import xgrammar as xgr

from engine.guided.state import GuideState


@dataclass
class MaskStats:
    steps: int = 0              # sampling steps with at least one constrained row
    rows: int = 0               # constrained rows masked
    mask_s: float = 0.0         # filling and applying bitmasks
    advance_s: float = 0.0      # accepting tokens and keeping the closing plan


class BatchMasker:
    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size
        self.bitmask = xgr.allocate_token_bitmask(1, vocab_size)    # grown to the batch, reused
        self.stats = MaskStats()

    def apply(self, logits: torch.Tensor, rows: list[int], guides: list[GuideState]) -> None:
        """logits: [N, V] fp32; `guides[i]` masks row `rows[i]` in place."""
        start = time.perf_counter()
        if self.bitmask.shape[0] < logits.shape[0]:
            self.bitmask = xgr.allocate_token_bitmask(logits.shape[0], self.vocab_size)
        bitmask = self.bitmask[:logits.shape[0]]
        for row, guide in zip(rows, guides):
            guide.fill(bitmask, row)
        if logits.device.type != "cpu":
            bitmask = bitmask.to(logits.device, non_blocking=True)
        xgr.apply_token_bitmask_inplace(logits, bitmask, vocab_size=self.vocab_size, indices=rows)
        self.stats.steps += 1
        self.stats.rows += len(rows)
        self.stats.mask_s += time.perf_counter() - start
