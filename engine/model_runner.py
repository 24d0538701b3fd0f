"""`ModelRunner`: the model on its device and dtype, its paged KV pool and attention backend, and the
packing of a scheduled batch into one forward pass (token ids, positions, slot mapping, block tables).

Returns fp32 logits only for the requests that sample this step (their last token is computed).
"""
from __future__ import annotations

import logging

import torch

from engine.attention.backend import AttentionMetadata, DecodeMetadata, ExtendMetadata
from engine.attention.selection import select_backend
from engine.compile import compile_layers
from engine.config import EngineConfig, ModelConfig, dtype_name, parse_dtype
from engine.cuda_graphs import DecodeGraphs
from engine.kv.pool import KVPool, pool_blocks
from engine.layers.attention import ForwardContext, stepping
from engine.loader import Checkpoint
from engine.models import model_class
from engine.sampling_params import SamplingParams
from engine.scheduler import ScheduledBatch
from engine.sequence import Sequence

log = logging.getLogger(__name__)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


class ModelRunner:
    def __init__(self, checkpoint: Checkpoint, config: EngineConfig | None = None,
                 model: torch.nn.Module | None = None) -> None:
        """`model`: an already built model of this checkpoint, device and dtype (engines may share one)."""
        self.engine_config = config = config or EngineConfig()
        self.config: ModelConfig = checkpoint.config
        self.device, self.dtype = torch.device(config.device), parse_dtype(config.dtype, config.device)
        self.model = model or model_class(self.config).build(self.config, checkpoint.weights, self.device,
                                                             self.dtype)
        self.block_size = config.block_size
        num_blocks = pool_blocks(self.config, config, self.dtype, self.device)
        self.pool = KVPool(self.config, num_blocks, self.block_size, self.dtype, self.device)
        self.backend = select_backend(self.device, config.attention_backend)
        if config.compile:
            compile_layers(self.model)
        self.graphs = None
        if config.cuda_graphs and self.device.type == "cuda" and self.backend.graph_safe:
            longest = min([self.config.max_context, num_blocks * self.block_size]
                          + ([config.max_model_len] if config.max_model_len else []))
            self.graphs = DecodeGraphs(self.model, self.pool, self.backend, config.max_num_seqs, longest)
        log.info("%s on %s in %s: %d KV blocks of %d tokens (%.0f MiB), %s attention", self.config.name,
                 self.device, dtype_name(self.dtype), num_blocks, self.block_size,
                 self.pool.nbytes / 2**20, self.backend.name)

    @property
    def num_blocks(self) -> int:
        return self.pool.num_blocks

    @torch.inference_mode()
    def execute(self, batch: ScheduledBatch) -> tuple[list[Sequence], torch.Tensor]:
        """One forward pass over the batch -> (requests that sample, their fp32 logits [N, V])."""
        ids, ctx, rows, sampling = self.prepare(batch)
        if self.graphs is not None and not batch.extends:
            hidden = self.graphs.run(ids, ctx)                               # [T, D]
        else:
            with stepping(ctx):
                hidden = self.model(ids, ctx)
        if not rows:
            return [], hidden.new_empty(0, self.config.vocab_size, dtype=torch.float32)
        if len(rows) < hidden.shape[0]:                                      # else every row samples
            hidden = hidden[torch.tensor(rows, device=self.device)]
        return sampling, self.model.compute_logits(hidden).float()

    @torch.inference_mode()
    def logits_at_every_position(self, token_ids: list[int], block_ids: list[int]) -> torch.Tensor:
        """Prefill `token_ids` from position 0 into `block_ids` (the caller owns them); fp32 logits
        [T, V] at every position, for parity checks against other implementations."""
        seq = Sequence(token_ids, SamplingParams(max_tokens=1))
        seq.block_ids = list(block_ids)
        ids, ctx, _, _ = self.prepare(ScheduledBatch(extends=[(seq, len(token_ids))]))
        with stepping(ctx):
            return self.model.compute_logits(self.model(ids, ctx)).float()

    def prepare(self, batch: ScheduledBatch):
        """Pack decodes then extends: (token ids [T], context, rows of sampled tokens, their requests)."""
        ids, positions, slots, rows, sampling = [], [], [], [], []
        for seq, n in batch.scheduled():
            start = seq.num_computed_tokens
            assert start + n <= seq.num_tokens and len(seq.block_ids) * self.block_size >= start + n, \
                (start, n, seq.num_tokens, len(seq.block_ids), seq.status, [(s.seq_id, k) for s, k in batch.scheduled()])
            ids += seq.token_ids[start:start + n]
            positions += range(start, start + n)
            slots += [seq.block_ids[p // self.block_size] * self.block_size + p % self.block_size
                      for p in range(start, start + n)]
            if start + n == seq.num_tokens:
                rows.append(len(ids) - 1)
                sampling.append(seq)
        meta = AttentionMetadata(self.tensor(slots, torch.int64), len(batch.decodes),
                                 self.decode_metadata(batch.decodes), self.extend_metadata(batch.extends))
        self.backend.prepare(meta)
        ctx = ForwardContext(meta, self.pool, self.backend, self.tensor(positions, torch.int64))
        return self.tensor(ids, torch.int64), ctx, rows, sampling

    def decode_metadata(self, seqs: list[Sequence]) -> DecodeMetadata | None:
        if not seqs:
            return None
        lens = [s.num_computed_tokens + 1 for s in seqs]
        table = self.block_table([s.block_ids[:cdiv(n, self.block_size)] for s, n in zip(seqs, lens)])
        return DecodeMetadata(self.tensor(lens, torch.int32), table, max(lens), lens)

    def extend_metadata(self, items: list[tuple[Sequence, int]]) -> ExtendMetadata | None:
        if not items:
            return None
        q_lens = [n for _, n in items]
        prefix = [s.num_computed_tokens for s, _ in items]
        lens = [p + n for p, n in zip(prefix, q_lens)]
        cu = [0]
        for n in q_lens:
            cu.append(cu[-1] + n)
        table = self.block_table([s.block_ids[:cdiv(n, self.block_size)] for (s, _), n in zip(items, lens)])
        return ExtendMetadata(self.tensor(cu, torch.int32), self.tensor(prefix, torch.int32),
                              self.tensor(lens, torch.int32), table, max(q_lens), max(lens), q_lens, prefix)

    def block_table(self, rows: list[list[int]]) -> torch.Tensor:
        """int32 [batch, longest row], padded with 0."""
        width = max(len(r) for r in rows)
        return self.tensor([r + [0] * (width - len(r)) for r in rows], torch.int32)

    def tensor(self, values: list, dtype: torch.dtype) -> torch.Tensor:
        t = torch.tensor(values, dtype=dtype)
        return t if self.device.type == "cpu" else t.to(self.device, non_blocking=True)
