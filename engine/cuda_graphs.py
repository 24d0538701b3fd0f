"""`DecodeGraphs`: the decode step captured in CUDA graphs, one per batch-size bucket. A batch of B
decoding requests replays the graph of the smallest bucket >= B: its token ids, positions, slots, block
table and lengths are copied into static buffers, and the rows past B decode a dummy token at position 0
of the pool's spare block, which no request owns (their outputs are dropped).

Each graph is captured the first time a batch needs its bucket, after one eager warm-up run on the same
buffers; the attention metadata it captures says the longest context, so the Triton decode kernel plans
its splits for any length (shorter requests leave splits empty, which the merge ignores). Only backends
that read lengths and tables from device tensors alone (`graph_safe`) may be captured.
"""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from engine.attention.backend import AttentionBackend, AttentionMetadata, DecodeMetadata
from engine.kv.pool import KVPool
from engine.layers.attention import ForwardContext, stepping

BUCKETS = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)


class DecodeGraphs:
    def __init__(self, model: nn.Module, pool: KVPool, backend: AttentionBackend, max_batch: int,
                 max_context: int, cuda: bool = True) -> None:
        """`cuda=False` replays by running the forward pass again on the static buffers (no capture): the
        buffers, padding and spare block without a GPU, for tests."""
        assert backend.graph_safe, f"{backend.name} attention cannot be captured"
        self.model, self.pool, self.backend, self.cuda = model, pool, backend, cuda
        self.max_context, self.buckets = max_context, [b for b in BUCKETS if b < max_batch] + [max_batch]
        n, device, bs = self.buckets[-1], pool.kv.device, pool.block_size
        self.ids = torch.zeros(n, dtype=torch.int64, device=device)
        self.positions = torch.zeros(n, dtype=torch.int64, device=device)
        self.slots = torch.full((n,), pool.spare_block * bs, dtype=torch.int64, device=device)
        self.table = torch.full((n, -(-max_context // bs)), pool.spare_block, dtype=torch.int32, device=device)
        self.lens = torch.ones(n, dtype=torch.int32, device=device)
        self.replays: dict[int, Callable[[], torch.Tensor]] = {}
        self.mempool = None

    def bucket(self, batch: int) -> int | None:
        """The smallest bucket that holds `batch` rows; None past the largest."""
        return next((b for b in self.buckets if b >= batch), None)

    def run(self, ids: torch.Tensor, ctx: ForwardContext) -> torch.Tensor:
        """A decode-only step (ids [B], its context as the runner prepared it) -> hidden states [B, D]."""
        batch = ids.shape[0]
        rows = self.bucket(batch)
        self.load(ids, ctx, batch, rows)
        if rows not in self.replays:
            self.replays[rows] = self.record(rows)
        return self.replays[rows]()[:batch]

    def load(self, ids: torch.Tensor, ctx: ForwardContext, batch: int, rows: int) -> None:
        decode = ctx.meta.decode
        assert ctx.meta.extend is None and decode is not None and decode.block_table.shape[0] == batch
        self.ids[:batch].copy_(ids)
        self.positions[:batch].copy_(ctx.positions)
        self.slots[:batch].copy_(ctx.meta.slot_mapping)
        self.table[:batch, :decode.block_table.shape[1]].copy_(decode.block_table)
        self.lens[:batch].copy_(decode.seq_lens)
        self.ids[batch:rows] = 0                                   # padding: a dummy token at position 0
        self.positions[batch:rows] = 0                             # of the spare block, which it alone
        self.slots[batch:rows] = self.pool.spare_block * self.pool.block_size   # reads and writes
        self.table[batch:rows, 0] = self.pool.spare_block
        self.lens[batch:rows] = 1

    def context(self, rows: int) -> ForwardContext:
        """The static buffers' first `rows` rows as a step's context (lengths planned for the longest)."""
        decode = DecodeMetadata(self.lens[:rows], self.table[:rows], self.max_context, [self.max_context] * rows)
        meta = AttentionMetadata(self.slots[:rows], rows, decode, None)
        self.backend.prepare(meta)
        return ForwardContext(meta, self.pool, self.backend, self.positions[:rows])

    def record(self, rows: int) -> Callable[[], torch.Tensor]:
        ctx = self.context(rows)

        def forward() -> torch.Tensor:
            with stepping(ctx):
                return self.model(self.ids[:rows], ctx)

        if not self.cuda:
            return forward
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):        # warm-up off the capture: compiles kernels, moves lazy tensors
            forward()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.mempool):
            out = forward()
        self.mempool = graph.pool()          # later buckets share the memory of the first

        def replay() -> torch.Tensor:
            graph.replay()
            return out
        return replay
