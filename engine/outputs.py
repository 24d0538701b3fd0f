"""`RequestOutput`: one streamed step of a request, as the async API yields it; `RequestMetrics`: the
request's timings and prefix reuse, attached to its last output."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class RequestMetrics:
    ttft_s: float                 # arrival -> first token
    tpot_s: float                 # mean time per output token after the first (0 for one token)
    queue_s: float                # arrival -> first scheduled
    e2e_s: float                  # arrival -> finish
    cached_tokens: int            # prompt tokens whose KV came from the prefix cache
    preemptions: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class RequestOutput:
    request_id: str
    text: str = ""                                        # new text since the previous output
    token_ids: list[int] = field(default_factory=list)    # new token ids since the previous output
    finish_reason: str | None = None                      # None until the last output: "stop" | "length"
    prompt_tokens: int = 0
    completion_tokens: int = 0                            # running count
    metrics: RequestMetrics | None = None                 # on the last output only
    seq_id: int = -1                                      # the engine's handle of the request

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None
