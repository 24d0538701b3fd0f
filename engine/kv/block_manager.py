"""`BlockManager`: gives sequences their KV blocks, reusing cached prefixes, and takes them back.

Admission matches the prompt in the prefix cache, locks the match, and allocates blocks for the rest
of the known tokens (evicting cached leaves when the free list is short). Full blocks are offered to
the cache as soon as they are computed, so requests that arrive later reuse them at once.
"""
from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from engine.kv.block_allocator import BlockAllocator
from engine.kv.radix_cache import RadixCache
from engine.sequence import Sequence


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


class BlockUsage(NamedTuple):
    total: int
    free: int
    cached: int      # in the prefix cache, used by no request: reclaimable
    in_use: int      # held by running requests (their own blocks and the cached ones they locked)


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, enable_prefix_caching: bool = True,
                 share_across_tenants: bool = False) -> None:
        self.block_size = block_size
        self.allocator = BlockAllocator(num_blocks)
        self.cache = RadixCache(self.allocator, block_size) if enable_prefix_caching else None
        self.share_across_tenants = share_across_tenants

    @property
    def num_blocks(self) -> int:
        return self.allocator.num_blocks

    @property
    def num_available(self) -> int:
        """Blocks that can be handed out now: free ones plus unlocked cached ones."""
        return self.allocator.num_free + (self.cache.evictable_blocks if self.cache else 0)

    def salt(self, seq: Sequence) -> str:
        return "" if self.share_across_tenants else f"tenant:{seq.tenant or ''}"

    def admit(self, seq: Sequence, reserve: int = 0) -> bool:
        """Give a waiting sequence blocks for all its known tokens, reusing the longest cached prefix
        (never the last token: its logits are needed). False, changing nothing, if they do not fit
        with `reserve` blocks to spare."""
        assert not seq.block_ids and seq.num_computed_tokens == 0
        match = self.cache.match(seq.token_ids[:-1], self.salt(seq)) if self.cache else None
        if match is not None:
            self.cache.lock(match.node)
        cached = match.blocks if match else []
        need = cdiv(seq.num_tokens, self.block_size) - len(cached)
        if need + reserve > self.num_available:
            if match is not None:
                self.cache.unlock(match.node)
            return False
        if match is not None:
            self.allocator.retain(cached)
            seq.cache_node = match.node
        seq.block_ids = cached + self.allocate(need)
        seq.num_computed_tokens = len(cached) * self.block_size
        seq.num_cached_blocks = len(cached)
        return True

    def can_grow(self, seq: Sequence, num_new_tokens: int) -> bool:
        return self.blocks_to_grow(seq, num_new_tokens) <= self.num_available

    def grow(self, seq: Sequence, num_new_tokens: int) -> None:
        """Make room for the next `num_new_tokens` tokens to be computed (decode: one)."""
        seq.block_ids += self.allocate(self.blocks_to_grow(seq, num_new_tokens))

    def blocks_to_grow(self, seq: Sequence, num_new_tokens: int) -> int:
        tokens = seq.num_computed_tokens + num_new_tokens
        return max(0, cdiv(tokens, self.block_size) - len(seq.block_ids))

    def cache_computed(self, seq: Sequence) -> None:
        """Offer the sequence's computed full blocks to the prefix cache and lock the node they end in.
        Blocks the cache has already (computed by another request meanwhile) stay the sequence's own."""
        full = seq.num_computed_tokens // self.block_size
        if self.cache is None or full <= seq.num_cached_blocks:
            return
        tokens = seq.token_ids[:full * self.block_size]
        result = self.cache.insert(tokens, seq.block_ids[:full], self.salt(seq))
        self.cache.lock(result.node)
        if seq.cache_node is not None:
            self.cache.unlock(seq.cache_node)
        seq.cache_node, seq.num_cached_blocks = result.node, full

    def free(self, seq: Sequence, cache: bool = True) -> None:
        """Return every block of a finished, aborted or preempted sequence. With `cache`, its full
        computed blocks stay in the prefix cache first (a preempted request recomputes cheaply)."""
        if cache:
            self.cache_computed(seq)
        if seq.cache_node is not None:
            self.cache.unlock(seq.cache_node)
        self.allocator.release(seq.block_ids)
        seq.block_ids, seq.cache_node = [], None
        seq.num_computed_tokens = seq.num_cached_blocks = 0

    def allocate(self, n: int) -> list[int]:
        if n > self.allocator.num_free and self.cache is not None:
            self.cache.evict(n - self.allocator.num_free)
        return self.allocator.allocate(n)

    def usage(self) -> BlockUsage:
        cached = self.cache.evictable_blocks if self.cache else 0
        free = self.allocator.num_free
        return BlockUsage(self.num_blocks, free, cached, self.num_blocks - free - cached)

    def check(self, live: list[Sequence]) -> BlockUsage:
        """Integrity: every reference count equals the holders found (live sequences + the cache), and
        free + cached + in use == total with `in use` counted from the holders, not derived."""
        self.allocator.check()
        holders = Counter(b for seq in live for b in seq.block_ids)
        cached_ids = set()
        if self.cache is not None:
            self.cache.check()
            cached_ids = set(self.cache.block_ids())
            holders.update(cached_ids)
        wrong = [b for b in range(self.num_blocks) if self.allocator.ref_counts[b] != holders.get(b, 0)]
        assert not wrong, f"blocks {wrong[:8]} have references nobody holds (or holders not counted)"
        in_use = len({b for seq in live for b in seq.block_ids} | self.locked_block_ids())
        usage = self.usage()
        assert usage.free + usage.cached + in_use == usage.total, f"{usage} but {in_use} held"
        assert in_use == usage.in_use
        return usage

    def locked_block_ids(self) -> set[int]:
        if self.cache is None:
            return set()
        return {b for n in self.cache.nodes() if n.lock_ref for b in n.blocks}
