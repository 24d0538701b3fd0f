"""`BlockAllocator`: which KV blocks are free, and how many holders each used block has.

A block is free at reference count 0 and in use above it. Holders are the sequences whose block table
lists it and the prefix cache (one reference for as long as the block sits in the radix tree).
Freed blocks are handed out again first (a stack): they are the ones still warm in the CPU caches.
"""
from __future__ import annotations


class OutOfBlocks(RuntimeError):
    """Asked for more blocks than are free; callers check `num_free` (and evict) first."""


class BlockAllocator:
    def __init__(self, num_blocks: int) -> None:
        assert num_blocks > 0
        self.num_blocks = num_blocks
        self.ref_counts = [0] * num_blocks
        self.free_ids: list[int] = list(reversed(range(num_blocks)))    # block 0 is handed out first

    @property
    def num_free(self) -> int:
        return len(self.free_ids)

    def allocate(self, n: int) -> list[int]:
        """n free blocks, each with one reference (the caller's)."""
        if n > len(self.free_ids):
            raise OutOfBlocks(f"asked for {n} blocks, {len(self.free_ids)} free")
        ids = [self.free_ids.pop() for _ in range(n)]
        for b in ids:
            assert self.ref_counts[b] == 0, f"block {b} was free with references"
            self.ref_counts[b] = 1
        return ids

    def retain(self, ids: list[int]) -> None:
        """One more holder for blocks already in use."""
        for b in ids:
            assert self.ref_counts[b] > 0, f"retain of free block {b}"
            self.ref_counts[b] += 1

    def release(self, ids: list[int]) -> int:
        """One holder fewer; blocks nobody holds any more go back to the free list. Returns how many."""
        freed = 0
        for b in ids:
            assert self.ref_counts[b] > 0, f"release of free block {b}"
            self.ref_counts[b] -= 1
            if self.ref_counts[b] == 0:
                self.free_ids.append(b)
                freed += 1
        return freed

    def check(self) -> None:
        """Free list == blocks with no holder, without repeats."""
        free = set(self.free_ids)
        assert len(free) == len(self.free_ids), "a block is twice in the free list"
        unheld = {b for b, n in enumerate(self.ref_counts) if n == 0}
        assert free == unheld, f"free list {sorted(free ^ unheld)[:8]} disagrees with reference counts"
        assert all(n >= 0 for n in self.ref_counts)
