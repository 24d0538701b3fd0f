"""The block allocator and the radix-tree prefix cache on their own (no model): reference counts,
block-aligned matching, node splits, LRU eviction of unlocked leaves, tenant namespaces, and random
sequences of insert / match / lock / unlock / evict checked against the invariants after every step.
"""
from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from engine.kv.block_allocator import BlockAllocator, OutOfBlocks
from engine.kv.radix_cache import RadixCache

BS = 4


def cache_with(num_blocks: int = 32) -> RadixCache:
    return RadixCache(BlockAllocator(num_blocks), BS)


def insert_new(cache: RadixCache, tokens: list[int], salt: str = ""):
    """Allocate blocks for `tokens`, cache them, drop the caller's reference: only the tree holds them."""
    blocks = cache.allocator.allocate(len(tokens) // BS)
    result = cache.insert(tokens, blocks, salt)
    cache.allocator.release(blocks)
    return blocks, result


def test_allocator_counts_holders_and_frees_at_zero():
    alloc = BlockAllocator(4)
    a = alloc.allocate(3)
    alloc.retain(a[:1])
    assert alloc.release(a) == 2 and alloc.num_free == 3
    assert alloc.release(a[:1]) == 1 and alloc.num_free == 4
    with pytest.raises(OutOfBlocks):
        alloc.allocate(5)
    with pytest.raises(AssertionError):
        alloc.release([0])
    alloc.check()


def test_match_is_block_aligned_and_splits_on_divergence():
    cache = cache_with()
    blocks, _ = insert_new(cache, list(range(12)))
    hit = cache.match(list(range(10)) + [99, 98])       # diverges inside the third block
    assert hit.num_tokens == 8 and hit.blocks == blocks[:2]
    assert len(hit.node.key) == 8                      # the node was cut at the block boundary
    assert cache.match(list(range(12))).blocks == blocks
    assert cache.match([7, 7, 7, 7]).num_tokens == 0
    cache.check()


def test_insert_keeps_the_trees_blocks_for_the_known_part():
    cache = cache_with()
    first, _ = insert_new(cache, list(range(8)))
    mine = cache.allocator.allocate(3)
    result = cache.insert(list(range(12)), mine)
    assert result.num_cached_blocks == 2
    assert cache.match(list(range(12))).blocks == first + mine[2:]
    assert cache.allocator.ref_counts[mine[0]] == 1    # a duplicate: still only the caller's
    cache.check()


def test_other_tenant_never_hits():
    cache = cache_with()
    insert_new(cache, list(range(8)), salt="tenant:a")
    assert cache.match(list(range(8)), "tenant:a").num_tokens == 8
    assert cache.match(list(range(8)), "tenant:b").num_tokens == 0
    assert cache.match(list(range(8)), "").num_tokens == 0


def test_eviction_is_lru_and_skips_locked_nodes():
    cache = cache_with()
    insert_new(cache, [1] * 4)
    locked, _ = insert_new(cache, [2] * 4)
    insert_new(cache, [3] * 4)
    cache.match([1] * 4)                       # touched: now the most recent
    cache.lock(cache.match([2] * 4).node)
    assert cache.evict(1) == 1
    assert cache.match([3] * 4).num_tokens == 0 and cache.match([1] * 4).num_tokens == 4
    assert cache.evict(10) == 1                # [1]*4 goes; the locked one stays
    assert cache.match([2] * 4).blocks == locked and cache.evictable_blocks == 0
    cache.check()


def test_evicting_a_leaf_exposes_its_parent():
    cache = cache_with()
    insert_new(cache, list(range(8)))
    insert_new(cache, list(range(12)))
    assert cache.evict(3) == 3 and cache.num_blocks == 0 and cache.allocator.num_free == 32


TOKENS = st.lists(st.integers(0, 2), min_size=0, max_size=6).map(lambda b: [t for x in b for t in [x] * BS])


class CacheMachine(RuleBasedStateMachine):
    """Requests come and go: each matches its prompt, locks the match, holds those blocks, and caches
    the blocks of its whole prompt; eviction must never free a block a live request holds."""

    def __init__(self) -> None:
        super().__init__()
        self.cache = cache_with(24)
        self.live: list[tuple[object, list[int]]] = []      # (locked node, blocks held)
        self.content: dict[int, tuple] = {}                  # block -> (salt, the prefix it holds)

    @rule(tokens=TOKENS, salt=st.sampled_from(["", "tenant:b"]))
    def request(self, tokens, salt):
        hit = self.cache.match(tokens, salt)
        assert len(hit.blocks) * BS == hit.num_tokens <= len(tokens)
        for i, b in enumerate(hit.blocks):       # a reused block holds exactly this prefix, this tenant
            assert self.content[b] == (salt, tuple(tokens[:(i + 1) * BS]))
        self.cache.lock(hit.node)
        need = len(tokens) // BS - len(hit.blocks)
        if need > self.cache.allocator.num_free:
            self.cache.evict(need - self.cache.allocator.num_free)
        if need > self.cache.allocator.num_free:
            self.cache.unlock(hit.node)
            return
        self.cache.allocator.retain(hit.blocks)
        blocks = hit.blocks + self.cache.allocator.allocate(need)
        for i in range(len(hit.blocks), len(blocks)):
            self.content[blocks[i]] = (salt, tuple(tokens[:(i + 1) * BS]))
        result = self.cache.insert(tokens, blocks, salt)
        self.cache.lock(result.node)
        self.cache.unlock(hit.node)
        self.live.append((result.node, blocks))

    @precondition(lambda self: self.live)
    @rule(index=st.integers(0, 100))
    def finish(self, index):
        node, blocks = self.live.pop(index % len(self.live))
        self.cache.unlock(node)
        self.cache.allocator.release(blocks)

    @rule(n=st.integers(0, 30))
    def evict(self, n):
        held = {b for _, blocks in self.live for b in blocks}
        before = self.cache.allocator.num_free
        freed = self.cache.evict(n)
        assert self.cache.allocator.num_free == before + freed
        assert all(self.cache.allocator.ref_counts[b] > 0 for b in held), "evicted a block in use"

    @invariant()
    def accounting_holds(self):
        self.cache.check()
        self.cache.allocator.check()
        held = [b for _, blocks in self.live for b in blocks]
        tree = set(self.cache.block_ids())
        for b in range(self.cache.allocator.num_blocks):
            assert self.cache.allocator.ref_counts[b] == held.count(b) + (b in tree)
        locked = {b for n in self.cache.nodes() if n.lock_ref for b in n.blocks}
        assert {b for b in held if b in tree} <= locked, "a live request uses an unlocked cached block"
        free, cached = self.cache.allocator.num_free, self.cache.evictable_blocks
        in_use = len(set(held) | locked)
        assert free + cached + in_use == self.cache.allocator.num_blocks


TestCacheMachine = CacheMachine.TestCase
TestCacheMachine.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
