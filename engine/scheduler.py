"""`Scheduler`: continuous batching. Every step it picks, under a token budget, one token for each
decoding request, then chunks of unfinished prompts, then new requests admitted by free blocks.

Order is priority first, arrival second. When a decoding request needs a block and none is left, the
lowest-priority latest request is preempted: its blocks go back (full ones stay in the prefix cache)
and it waits to be recomputed. A waiting request may also preempt running ones of strictly lower
priority to get in.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from engine.config import EngineConfig
from engine.kv.block_manager import BlockManager
from engine.sequence import Sequence, Status


@dataclass
class ScheduledBatch:
    decodes: list[Sequence] = field(default_factory=list)               # one token each, packed first
    extends: list[tuple[Sequence, int]] = field(default_factory=list)   # (request, tokens this step)
    admitted: list[Sequence] = field(default_factory=list)              # newly running this step

    @property
    def num_tokens(self) -> int:
        return len(self.decodes) + sum(n for _, n in self.extends)

    @property
    def is_empty(self) -> bool:
        return not self.decodes and not self.extends

    def scheduled(self) -> list[tuple[Sequence, int]]:
        return [(s, 1) for s in self.decodes] + self.extends

    def drop(self, seq: Sequence) -> None:
        self.decodes = [s for s in self.decodes if s is not seq]
        self.extends = [(s, n) for s, n in self.extends if s is not seq]
        self.admitted = [s for s in self.admitted if s is not seq]


class Scheduler:
    def __init__(self, config: EngineConfig, blocks: BlockManager) -> None:
        self.config, self.blocks = config, blocks
        self.waiting: list[Sequence] = []     # sorted by Sequence.sort_key
        self.running: list[Sequence] = []     # sorted by Sequence.sort_key
        self.num_preemptions = 0
        self.watermark = max(1, blocks.num_blocks // 100)   # spare blocks kept when admitting beside others

    @property
    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def add(self, seq: Sequence) -> None:
        seq.status = Status.WAITING
        bisect.insort(self.waiting, seq, key=Sequence.sort_key)

    def schedule(self) -> ScheduledBatch:
        batch = ScheduledBatch()
        budget = self.config.max_num_batched_tokens
        budget -= self.schedule_decodes(batch)
        budget -= self.schedule_prefills(batch, budget)
        self.admit(batch, budget)
        return batch

    def schedule_decodes(self, batch: ScheduledBatch) -> int:
        for seq in list(self.running):
            if seq.status is not Status.RUNNING or seq.in_prefill:
                continue
            if self.make_room(seq, 1, batch):
                batch.decodes.append(seq)
        return len(batch.decodes)

    def schedule_prefills(self, batch: ScheduledBatch, budget: int) -> int:
        used = 0
        for seq in list(self.running):
            if budget - used <= 0:
                break
            if seq.status is not Status.RUNNING or not seq.in_prefill:
                continue
            n = min(seq.num_uncomputed_tokens, budget - used)
            if self.make_room(seq, n, batch):
                batch.extends.append((seq, n))
                used += n
        return used

    def make_room(self, seq: Sequence, n: int, batch: ScheduledBatch) -> bool:
        """Blocks for n more tokens of a running request, preempting the lowest-priority latest requests
        (possibly `seq` itself, then False) until they fit."""
        while not self.blocks.can_grow(seq, n):
            victim = self.running[-1]
            batch.drop(victim)
            self.preempt(victim)
            if victim is seq:
                return False
        self.blocks.grow(seq, n)
        return True

    def admit(self, batch: ScheduledBatch, budget: int) -> None:
        """Waiting requests in order while the budget lasts; one that shares a prefix with a prompt still
        being computed waits for it (then reuses its blocks instead of computing them twice)."""
        prefilling = [s for s in self.running if s.in_prefill]
        for seq in list(self.waiting):
            if budget <= 0:
                return
            if self.waits_for_shared_prefix(seq, prefilling):
                continue
            if not self.try_admit(seq, batch):
                return
            self.waiting.remove(seq)
            seq.status = Status.RUNNING
            bisect.insort(self.running, seq, key=Sequence.sort_key)
            n = min(seq.num_uncomputed_tokens, budget)
            batch.extends.append((seq, n))
            batch.admitted.append(seq)
            prefilling.append(seq)
            budget -= n

    def waits_for_shared_prefix(self, seq: Sequence, prefilling: list[Sequence]) -> bool:
        """True if a request in prefill will compute blocks of `seq`'s prompt that are not cached yet."""
        if self.blocks.cache is None:
            return False
        bs, salt = self.blocks.block_size, self.blocks.salt(seq)
        usable = (seq.num_tokens - 1) // bs                      # blocks a match may ever cover
        for other in prefilling:
            if self.blocks.salt(other) == salt and other.num_cached_blocks < usable:
                shared = 0
                while shared < usable and seq.token_ids[shared * bs:(shared + 1) * bs] == \
                        other.token_ids[shared * bs:(shared + 1) * bs]:
                    shared += 1
                if shared > other.num_cached_blocks:
                    return True
        return False

    def try_admit(self, seq: Sequence, batch: ScheduledBatch) -> bool:
        """Room (a seat and blocks) for a waiting request, preempting lower-priority ones if need be."""
        while True:
            seated = len(self.running) < self.config.max_num_seqs
            if seated and self.blocks.admit(seq, self.watermark if self.running else 0):
                return True
            if not self.running or self.running[-1].priority >= seq.priority:
                return False
            victim = self.running[-1]
            batch.drop(victim)
            self.preempt(victim)

    def preempt(self, seq: Sequence) -> None:
        """Back to waiting, blocks released (full computed ones stay cached) and its grammar's matcher
        dropped: recomputed (and replayed) when readmitted."""
        self.running.remove(seq)
        self.blocks.free(seq, cache=True)
        if seq.guide is not None:
            seq.guide.drop()
        seq.num_preemptions += 1
        self.num_preemptions += 1
        self.add(seq)

    def finish(self, seq: Sequence) -> None:
        self.running.remove(seq)
        self.blocks.free(seq, cache=True)
        seq.status = Status.FINISHED

    def abort(self, seq: Sequence) -> None:
        """Drop a request wherever it is; its blocks are free (or cached) on return."""
        if seq in self.waiting:
            self.waiting.remove(seq)
        elif seq in self.running:
            self.finish(seq)
        seq.status = Status.FINISHED
