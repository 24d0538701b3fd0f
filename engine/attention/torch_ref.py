"""`TorchReferenceBackend`: attention in plain torch that reads K/V through the block table: the CPU
path of the engine and the oracle the Triton kernels are tested against.

Decode of short contexts gathers each request's blocks into a padded [batch, S, Hkv, D] tensor and
runs one masked `scaled_dot_product_attention`; a lone request, or a batch with a long context, runs
one unpadded, unmasked call per request over exactly its blocks. Extend runs one call per
request (ragged lengths), with a causal mask offset by the request's cached prefix.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from engine.attention.backend import AttentionBackend, DecodeMetadata, ExtendMetadata


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def gather(cache: torch.Tensor, table: torch.Tensor, num_blocks: int) -> torch.Tensor:
    """cache [N, bs, Hkv, D], table [B, >= num_blocks] -> [B, num_blocks * bs, Hkv, D]."""
    rows = cache[table[:, :num_blocks].long()]                       # [B, nb, bs, Hkv, D]
    return rows.flatten(1, 2)


def visible(q_pos: torch.Tensor, k_pos: torch.Tensor, window: int) -> torch.Tensor:
    """Bool mask [*q, *k]: key positions a query position attends to (causal, within the window)."""
    mask = k_pos <= q_pos
    if window:
        mask &= k_pos > q_pos - window
    return mask


class TorchReferenceBackend(AttentionBackend):
    name = "torch"

    def store_kv(self, k, v, k_cache, v_cache, slot_mapping) -> None:
        num_blocks, bs, hkv, d = k_cache.shape
        k_cache.view(num_blocks * bs, hkv, d).index_copy_(0, slot_mapping, k.to(k_cache.dtype))
        v_cache.view(num_blocks * bs, hkv, d).index_copy_(0, slot_mapping, v.to(v_cache.dtype))

    # From this longest context on, a batch decodes one request at a time: each call reads exactly its
    # own positions, unpadded and unmasked, which beats one padded masked call (2x at 64 x 540 tokens).
    per_request_from = 256

    def decode(self, q, k_cache, v_cache, meta: DecodeMetadata, sliding_window: int, scale: float):
        batch, hq, d = q.shape
        bs, hkv = k_cache.shape[1], k_cache.shape[2]
        if batch == 1 or meta.max_seq_len >= self.per_request_from:
            return torch.cat([self.decode_one(q[b:b + 1], k_cache, v_cache, meta.block_table[b],
                                              meta.seq_lens_host[b], sliding_window, scale)
                              for b in range(batch)])
        nb = cdiv(meta.max_seq_len, bs)
        keys = gather(k_cache, meta.block_table, nb).transpose(1, 2)     # [B, Hkv, S, D]
        values = gather(v_cache, meta.block_table, nb).transpose(1, 2)
        k_pos = torch.arange(nb * bs, device=q.device)[None, :]
        q_pos = (meta.seq_lens.long() - 1)[:, None]
        mask = visible(q_pos, k_pos, sliding_window)                     # [B, S]
        out = F.scaled_dot_product_attention(q.view(batch, hkv, hq // hkv, d), keys, values,
                                             attn_mask=mask[:, None, None, :], scale=scale)
        return out.reshape(batch, hq, d)

    def decode_one(self, q, k_cache, v_cache, table: torch.Tensor, length: int, window: int, scale: float):
        """One request (q [1, Hq, D], its block table row): exactly the positions it sees (the window's)."""
        hq, d = q.shape[1], q.shape[2]
        bs, hkv = k_cache.shape[1], k_cache.shape[2]
        start = max(0, length - window) if window else 0
        first, last = start // bs, cdiv(length, bs)                     # only the blocks that hold them
        rows = table[first:last].long()
        span = slice(start - first * bs, length - first * bs)
        keys = k_cache.index_select(0, rows).flatten(0, 1)[span].transpose(0, 1)         # [Hkv, L, D]
        values = v_cache.index_select(0, rows).flatten(0, 1)[span].transpose(0, 1)
        out = F.scaled_dot_product_attention(q.view(1, hkv, hq // hkv, d), keys[None], values[None], scale=scale)
        return out.reshape(1, hq, d)

    def extend(self, q, k_cache, v_cache, meta: ExtendMetadata, sliding_window: int, scale: float):
        outs, start = [], 0
        for b, (n, prefix) in enumerate(zip(meta.q_lens_host, meta.prefix_lens_host, strict=True)):
            outs.append(self.extend_one(q[start:start + n], k_cache, v_cache, meta.block_table[b:b + 1],
                                        prefix, sliding_window, scale))
            start += n
        return outs[0] if len(outs) == 1 else torch.cat(outs)

    def extend_one(self, q, k_cache, v_cache, table, prefix: int, window: int, scale: float):
        """q [n, Hq, D] at positions prefix .. prefix+n-1 -> [n, Hq, D]."""
        length = prefix + q.shape[0]
        nb = cdiv(length, k_cache.shape[1])
        keys = gather(k_cache, table, nb)[0, :length].transpose(0, 1)                    # [Hkv, L, D]
        values = gather(v_cache, table, nb)[0, :length].transpose(0, 1)
        causal_only = prefix == 0 and (not window or length <= window)
        mask = None
        if not causal_only:
            q_pos = torch.arange(prefix, length, device=q.device)[:, None]
            mask = visible(q_pos, torch.arange(length, device=q.device)[None, :], window)  # [n, L]
        # 4-D operands: with 3-D ones torch's CPU dispatch falls back to the unfused math path (3x slower)
        out = F.scaled_dot_product_attention(q.transpose(0, 1)[None], keys[None], values[None], attn_mask=mask,
                                             is_causal=causal_only, scale=scale, enable_gqa=True)
        return out[0].transpose(0, 1)
