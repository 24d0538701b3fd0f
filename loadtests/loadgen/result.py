"""One request as the load generator saw it: the intent it asked about, what the gateway said about the
cache, the text served, tokens, latency and time to first token, or the kind of error."""
from __future__ import annotations

from dataclasses import dataclass

HIT_OUTCOMES = ("hit-exact", "hit-curated", "hit-semantic")
SAVED_OUTCOMES = HIT_OUTCOMES + ("joined",)     # joined: shared an identical request's backend call
OUTCOMES = ("hit-exact", "hit-curated", "hit-semantic", "joined", "miss", "bypass")


@dataclass
class Result:
    label: str                        # the intent whose answer is right here (follow-ups: intent|kind)
    started_s: float                  # since the run began
    outcome: str = "error"            # the x-cachegate-cache header, or "error"
    latency_ms: float | None = None   # to the last byte
    ttft_ms: float | None = None      # to the first text (the whole answer when not streaming)
    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None          # "http_429", "stream_error", "TimeoutError", ...
    follow_up: bool = False
    similarity: float | None = None   # hit-semantic: the gateway's x-cachegate-similarity
    entry: str | None = None          # x-cachegate-entry: the curated answer's id on a curated hit
    asked: str = ""                   # the conversation so far as the client worded it, with its params

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def hit(self) -> bool:
        return self.ok and self.outcome in HIT_OUTCOMES

    @property
    def finished_s(self) -> float:
        return self.started_s + (self.latency_ms or 0.0) / 1000
