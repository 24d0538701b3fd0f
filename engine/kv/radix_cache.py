"""`RadixCache`: a radix tree over block-aligned token ids whose nodes own KV blocks, so a request
whose prompt starts with tokens already computed reuses their blocks.

Each namespace (a tenant's salt, or "" when tenants share) has its own root: a prefix computed for one
tenant is never found by another. Nodes hold whole blocks; a node is split at a block boundary when a
match or an insert diverges inside it.

Locking rule: the blocks of a `match` are safe to use only while its node is locked (`lock`), and the
caller must hold its own reference on them (`BlockAllocator.retain`). A locked node and its ancestors
are never evicted; unlocked leaves go least-recently-used first. The tree holds one allocator
reference per block it contains, dropped on eviction.
"""
from __future__ import annotations

import heapq
from typing import NamedTuple

from engine.kv.block_allocator import BlockAllocator


class Node:
    __slots__ = ("blocks", "children", "key", "last_used", "lock_ref", "parent")

    def __init__(self, key: tuple[int, ...] = (), blocks: list[int] | None = None,
                 parent: Node | None = None) -> None:
        self.key = key                          # token ids, len(blocks) * block_size of them
        self.blocks = blocks or []
        self.children: dict[tuple[int, ...], Node] = {}   # by the child's first block of tokens
        self.parent = parent
        self.lock_ref = 0                       # locked requests at or below this node
        self.last_used = 0

    @property
    def is_root(self) -> bool:
        return self.parent is None

    def __lt__(self, other: Node) -> bool:     # heap order: least recently used first
        return self.last_used < other.last_used


class MatchResult(NamedTuple):
    node: Node              # deepest node matched (a root when nothing matched): lock it before use
    blocks: list[int]       # the cached blocks of the prefix, in order
    num_tokens: int         # len(blocks) * block_size


class InsertResult(NamedTuple):
    node: Node              # node holding the last block inserted: lock it in place of the old one
    num_cached_blocks: int  # leading blocks the tree had already (the caller's copies stay its own)


class RadixCache:
    def __init__(self, allocator: BlockAllocator, block_size: int) -> None:
        self.allocator, self.block_size = allocator, block_size
        self.roots: dict[str, Node] = {}
        self.evictable_blocks = 0    # blocks in unlocked nodes: reclaimable by eviction
        self.locked_blocks = 0       # blocks in locked nodes: in use by a running request
        self.clock = 0

    @property
    def num_blocks(self) -> int:
        return self.evictable_blocks + self.locked_blocks

    def root(self, salt: str) -> Node:
        if salt not in self.roots:
            self.roots[salt] = Node()
        return self.roots[salt]

    def match(self, tokens: list[int], salt: str = "") -> MatchResult:
        """The longest block-aligned cached prefix of `tokens` in namespace `salt`."""
        node, matched, blocks = self.walk(self.root(salt), tokens)
        return MatchResult(node, blocks, matched)

    def insert(self, tokens: list[int], blocks: list[int], salt: str = "") -> InsertResult:
        """Cache `blocks` as the KV of `tokens` (len(tokens) == len(blocks) * block_size); the part
        the tree has already keeps the tree's blocks, the rest becomes a new leaf the tree retains."""
        assert len(tokens) == len(blocks) * self.block_size, "insert whole blocks only"
        node, matched, _ = self.walk(self.root(salt), tokens)
        done = matched // self.block_size
        if done < len(blocks):
            node = self.add_leaf(node, tuple(tokens[matched:]), blocks[done:])
        return InsertResult(node, done)

    def lock(self, node: Node) -> None:
        """Protect `node` and its ancestors from eviction (one count per locking request)."""
        while not node.is_root:
            if node.lock_ref == 0:
                self.evictable_blocks -= len(node.blocks)
                self.locked_blocks += len(node.blocks)
            node.lock_ref += 1
            node = node.parent

    def unlock(self, node: Node) -> None:
        while not node.is_root:
            assert node.lock_ref > 0, "unlock of an unlocked node"
            node.lock_ref -= 1
            if node.lock_ref == 0:
                self.evictable_blocks += len(node.blocks)
                self.locked_blocks -= len(node.blocks)
            node = node.parent

    def evict(self, num_blocks: int) -> int:
        """Drop unlocked leaves, least recently used first, until `num_blocks` blocks went back to the
        allocator (or nothing evictable is left). Returns the number freed."""
        leaves = [n for n in self.nodes() if not n.children and n.lock_ref == 0]
        heapq.heapify(leaves)
        freed = 0
        while freed < num_blocks and leaves:
            node = heapq.heappop(leaves)
            parent = self.remove_leaf(node)
            released = self.allocator.release(node.blocks)
            assert released == len(node.blocks), "an unlocked cached block was still held by a request"
            freed += released
            if not parent.is_root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(leaves, parent)
        return freed

    # -- tree mechanics ---------------------------------------------------------------------------

    def walk(self, node: Node, tokens: list[int]) -> tuple[Node, int, list[int]]:
        """Follow `tokens` down from `node` block by block: (deepest node, tokens matched, blocks)."""
        bs, matched, blocks = self.block_size, 0, []
        self.clock += 1
        while matched + bs <= len(tokens):
            child = node.children.get(tuple(tokens[matched:matched + bs]))
            if child is None:
                break
            same = self.common_blocks(child, tokens, matched)
            if same < len(child.blocks):
                child = self.split(child, same)
            child.last_used = self.clock
            blocks += child.blocks
            matched += len(child.key)
            node = child
        return node, matched, blocks

    def common_blocks(self, node: Node, tokens: list[int], start: int) -> int:
        """Whole blocks at the head of `node` equal to tokens[start:] (at least one: the child key)."""
        bs, n = self.block_size, 1
        while n < len(node.blocks):
            lo = start + n * bs
            if tuple(tokens[lo:lo + bs]) != node.key[n * bs:(n + 1) * bs]:
                break
            n += 1
        return n

    def split(self, node: Node, n: int) -> Node:
        """Cut `node` after its first n blocks; returns the new head (same locks, same age)."""
        assert 0 < n < len(node.blocks)
        cut = n * self.block_size
        head = Node(node.key[:cut], node.blocks[:n], node.parent)
        head.lock_ref, head.last_used = node.lock_ref, node.last_used
        node.parent.children[node.key[:self.block_size]] = head
        node.key, node.blocks, node.parent = node.key[cut:], node.blocks[n:], head
        head.children[node.key[:self.block_size]] = node
        return head

    def add_leaf(self, parent: Node, key: tuple[int, ...], blocks: list[int]) -> Node:
        leaf = Node(key, list(blocks), parent)
        leaf.last_used = self.clock
        parent.children[key[:self.block_size]] = leaf
        self.allocator.retain(leaf.blocks)
        self.evictable_blocks += len(leaf.blocks)
        return leaf

    def remove_leaf(self, node: Node) -> Node:
        assert not node.children and node.lock_ref == 0 and not node.is_root
        parent = node.parent
        del parent.children[node.key[:self.block_size]]
        self.evictable_blocks -= len(node.blocks)
        if parent.is_root and not parent.children:   # an empty namespace: forget its root
            self.roots = {s: r for s, r in self.roots.items() if r is not parent}
        return parent

    def nodes(self) -> list[Node]:
        """Every non-root node."""
        out, stack = [], [c for r in self.roots.values() for c in r.children.values()]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node.children.values())
        return out

    def block_ids(self) -> list[int]:
        return [b for n in self.nodes() for b in n.blocks]

    def check(self) -> None:
        """Tree shape, lock counts and block counters agree; every cached block is retained."""
        evictable = locked = 0
        for node in self.nodes():
            assert node.blocks and len(node.key) == len(node.blocks) * self.block_size
            assert node.parent.children.get(node.key[:self.block_size]) is node, "child key mismatch"
            assert node.parent.is_root or node.parent.lock_ref >= node.lock_ref, "lock not on ancestor"
            if node.lock_ref:
                locked += len(node.blocks)
            else:
                evictable += len(node.blocks)
            assert all(self.allocator.ref_counts[b] >= 1 for b in node.blocks), "cached block is free"
        ids = self.block_ids()
        assert len(ids) == len(set(ids)), "a block sits twice in the tree"
        assert (evictable, locked) == (self.evictable_blocks, self.locked_blocks), \
            f"counters {(self.evictable_blocks, self.locked_blocks)} != tree {(evictable, locked)}"
