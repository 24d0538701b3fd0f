"""Engine statistics: counters since start (requests, tokens, prefix reuse, preemptions) and recent
per-request timings, combined with the KV block usage into the dict `AsyncEngine.stats()` returns."""
from __future__ import annotations

import statistics
import time
from collections import deque
from dataclasses import dataclass, field

from engine.kv.block_manager import BlockUsage
from engine.outputs import RequestMetrics
from engine.sequence import Sequence

RECENT = 256   # finished requests the timing figures are taken over


def request_metrics(seq: Sequence) -> RequestMetrics:
    first = seq.first_token_time or seq.finish_time
    done = seq.finish_time or time.perf_counter()
    later = seq.num_completion_tokens - 1
    return RequestMetrics(
        ttft_s=first - seq.arrival_time,
        tpot_s=(done - first) / later if later > 0 else 0.0,
        queue_s=(seq.first_scheduled_time or done) - seq.arrival_time,
        e2e_s=done - seq.arrival_time,
        cached_tokens=seq.prefix_tokens_reused or 0,
        preemptions=seq.num_preemptions,
    )


def median_ms(values) -> float | None:
    return round(1000 * statistics.median(values), 2) if values else None


@dataclass
class EngineStats:
    started: float = field(default_factory=time.time)
    requests_finished: int = 0
    requests_aborted: int = 0
    requests_failed: int = 0
    prompt_tokens: int = 0             # of requests admitted (once each, recomputes not counted)
    cached_prompt_tokens: int = 0      # of those, reused from the prefix cache
    generated_tokens: int = 0
    steps: int = 0
    recent: deque = field(default_factory=lambda: deque(maxlen=RECENT))   # RequestMetrics

    def on_admitted(self, seq: Sequence) -> None:
        self.prompt_tokens += seq.num_prompt_tokens
        self.cached_prompt_tokens += seq.prefix_tokens_reused or 0

    def on_finished(self, metrics: RequestMetrics) -> None:
        self.requests_finished += 1
        self.recent.append(metrics)

    @property
    def prefix_hit_rate(self) -> float:
        return self.cached_prompt_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def snapshot(self, usage: BlockUsage, block_size: int, running: int, waiting: int,
                 preemptions: int) -> dict:
        recent = list(self.recent)
        return {
            "kv_blocks_total": usage.total, "kv_blocks_free": usage.free, "kv_blocks_cached": usage.cached,
            "kv_blocks_in_use": usage.in_use, "kv_block_size": block_size,
            "kv_usage": round(usage.in_use / usage.total, 4),
            "prefix_hit_rate": round(self.prefix_hit_rate, 4),
            "prompt_tokens": self.prompt_tokens, "cached_prompt_tokens": self.cached_prompt_tokens,
            "generated_tokens": self.generated_tokens,
            "running": running, "waiting": waiting, "preemptions": preemptions,
            "requests_finished": self.requests_finished, "requests_aborted": self.requests_aborted,
            "requests_failed": self.requests_failed, "steps": self.steps,
            "ttft_ms_p50": median_ms([m.ttft_s for m in recent]),
            "tpot_ms_p50": median_ms([m.tpot_s for m in recent if m.tpot_s > 0]),
            "queue_ms_p50": median_ms([m.queue_s for m in recent]),
            "uptime_s": round(time.time() - self.started, 1),
        }
