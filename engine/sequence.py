"""`Sequence`: one request's token state (prompt + generated ids), identity, scheduling state and the
KV blocks it holds, its grammar if it has one, plus the timestamps its metrics come from.

`token_ids` is prompt then completion; the first `num_computed_tokens` of them have their K/V in the
blocks of `block_ids`. A sequence is ready to sample once every token is computed.
"""
from __future__ import annotations

import enum
import itertools
import time
import uuid
from typing import TYPE_CHECKING

from engine.sampling_params import SamplingParams

if TYPE_CHECKING:
    from engine.guided.state import GuideState

ARRIVALS = itertools.count()


class Status(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


class Sequence:
    def __init__(self, prompt_token_ids: list[int], params: SamplingParams, request_id: str | None = None,
                 tenant: str | None = None, priority: int = 0, guide: GuideState | None = None) -> None:
        self.token_ids = list(prompt_token_ids)
        self.num_prompt_tokens = len(self.token_ids)
        self.params = params
        self.request_id = request_id or uuid.uuid4().hex
        self.tenant, self.priority = tenant, priority
        self.finish_reason: str | None = None
        self.guide = guide                           # the grammar its output must follow, if any
        self.status = Status.WAITING
        self.seq_id = next(ARRIVALS)                 # unique handle; FIFO within a priority class
        self.arrival_time = time.perf_counter()
        self.first_scheduled_time: float | None = None
        self.first_token_time: float | None = None
        self.finish_time: float | None = None
        # KV state, owned by the block manager
        self.block_ids: list[int] = []
        self.cache_node = None                       # the radix node this sequence keeps locked
        self.num_computed_tokens = 0
        self.num_cached_blocks = 0                   # leading blocks already in the prefix cache
        self.prefix_tokens_reused: int | None = None  # prompt tokens found in the cache at first admission
        self.num_preemptions = 0

    @property
    def prompt_token_ids(self) -> list[int]:
        return self.token_ids[:self.num_prompt_tokens]

    @property
    def output_token_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens:]

    @property
    def num_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def num_completion_tokens(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def max_tokens_total(self) -> int:
        """KV capacity the request can ever need."""
        return self.num_prompt_tokens + self.params.max_tokens

    @property
    def num_uncomputed_tokens(self) -> int:
        return len(self.token_ids) - self.num_computed_tokens

    @property
    def in_prefill(self) -> bool:
        """More than the last sampled token is left to compute (a prompt, or a recompute)."""
        return self.num_uncomputed_tokens > 1 or not self.output_token_ids

    @property
    def is_finished(self) -> bool:
        return self.finish_reason is not None

    def sort_key(self) -> tuple[int, int]:
        """Scheduling order: higher priority first, then earlier arrival."""
        return -self.priority, self.seq_id

    def append(self, token_id: int) -> None:
        assert not self.is_finished, "no tokens after the finish"
        assert self.num_completion_tokens < self.params.max_tokens
        assert self.num_computed_tokens == len(self.token_ids), "sampled before every token was computed"
        self.token_ids.append(token_id)
