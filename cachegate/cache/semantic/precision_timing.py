"""Which precision runs the embedder faster on this host: timed once per process where the CPU multiplies
bfloat16 natively but without AMX tiles (AVX512-BF16 alone), because there the answer is the host's.

Two EPYCs of the same model gave opposite answers: on one, 16 questions took 99 ms in bfloat16 against 61 ms in
float32; on the other (2026-12-07) 58-65 ms against 94-106, and one question 6-7 ms against 10-11, where the
float32 weights (42 MB of layers) no longer stay in the last-level cache between forwards and the bfloat16 ones
(21 MB) do. A lookup's embedding is most of its latency, so `precision: auto` times one question and a batch of
sixteen in each precision, each model as the embedder runs it (the frozen graph, on `threads` torch threads),
alternating the two a few times and keeping each one's fastest, and takes bfloat16 only when it is faster at both.
The vectors agree to 1e-4 in cosine either way, so the choice moves no decision. About a second, once.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from functools import cache

log = logging.getLogger(__name__)
QUESTIONS = ["How do I reset my password?", "Where is my new card?", "Can I change the delivery address?",
             "What is the fee for an international transfer?", "My payment was declined, what should I do?",
             "How long does a refund take to arrive?", "Is the store open on Sunday?", "How do I cancel my plan?",
             "Can you book a table for four at 7pm tonight?", "What's the weather in Paris tomorrow?",
             "How do I turn off notifications on my phone?", "Why was I charged twice for one order?",
             "I lost my card, can you freeze it?", "How many vacation days do I have left this year?",
             "Set an alarm for 6:30 tomorrow morning", "Which plan includes phone support?"]
ROUNDS = 3          # alternations of the two precisions
LONE_REPEATS = 3    # one-question forwards per round (each is a few milliseconds)
COMPARED = ("float32", "bfloat16")


@dataclass(frozen=True)
class PrecisionTiming:
    """The fastest forward of one question and of sixteen, in milliseconds, per precision."""
    lone_ms: dict[str, float]
    batch_ms: dict[str, float]

    @property
    def bf16_faster(self) -> bool:
        return (self.lone_ms["bfloat16"] <= self.lone_ms["float32"]
                and self.batch_ms["bfloat16"] < self.batch_ms["float32"])

    def as_dict(self) -> dict:
        return {"lone_ms": self.lone_ms, "batch_ms": self.batch_ms,
                "chosen": "bfloat16" if self.bf16_faster else "float32"}


FAILED = PrecisionTiming({"float32": 0.0, "bfloat16": float("inf")}, {"float32": 0.0, "bfloat16": float("inf")})


@cache
def timed_precisions(model: str, threads: int = 1) -> PrecisionTiming:
    """Both precisions timed on a thread of their own with the embedder's torch threads (OpenMP's setting is per
    thread); a precision that fails to load or run loses. The model loaded only for this is let go."""
    found: list[PrecisionTiming] = []

    def work() -> None:
        import torch
        if threads:
            torch.set_num_threads(threads)
        try:
            found.append(time_both(model))
        except Exception as exc:  # noqa: BLE001 - a model that cannot run in bfloat16 here runs in float32
            log.warning("timing the embedder in bfloat16 failed (%s): float32", exc)
    worker = threading.Thread(target=work, name="precision-timing")
    worker.start()
    worker.join()
    timing = found[0] if found else FAILED
    log.info("embedder precision timed: %s", timing.as_dict())
    return timing


def time_both(model: str) -> PrecisionTiming:
    import torch

    from cachegate.cache.semantic.encoder_models import is_loaded, load_forward, load_model, unload
    held = {p for p in COMPARED if is_loaded(model, p)}
    runs = {}
    for p in COMPARED:
        encoder = load_model(model, p)
        runs[p] = (load_forward(model, p), encoder.preprocess(QUESTIONS[:1]), encoder.preprocess(QUESTIONS))
    lone = {p: float("inf") for p in COMPARED}
    batch = dict(lone)
    with torch.inference_mode():
        for forward, one, sixteen in runs.values():     # warm: first calls allocate
            forward(one)
            forward(sixteen)
        for _ in range(ROUNDS):
            for p, (forward, one, sixteen) in runs.items():
                for _ in range(LONE_REPEATS):
                    lone[p] = min(lone[p], timed(forward, one))
                batch[p] = min(batch[p], timed(forward, sixteen))
    timing = PrecisionTiming({p: round(v, 2) for p, v in lone.items()}, {p: round(v, 2) for p, v in batch.items()})
    loser = "float32" if timing.bf16_faster else "bfloat16"
    if loser not in held:
        unload(model, loser)
    return timing


def timed(forward, features: dict) -> float:
    started = time.perf_counter()
    forward(features)
    return (time.perf_counter() - started) * 1000
