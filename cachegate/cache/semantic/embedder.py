"""Sentence embeddings (all-MiniLM-L6-v2 through sentence-transformers), off the event loop, micro-batched.

Lookups that arrive while the encoder is busy, or within `max_wait_ms` of each other, share one encode
call on a single worker thread, split into forward calls by a cost model (`batch_plan`): a call costs a fixed
share (streaming the weights) plus its padded tokens, so short questions share one call and a long context gets
its own; a queue of `SPLIT_AT` or more goes in two calls, so the loop works on the first half's lookups while the
encoder runs the second. The model loads once per process and precision (`precision: auto`: bfloat16 where the
CPU has AMX tiles, or has AVX512-BF16 and runs it faster when timed, `precision_timing`) and runs as one frozen
TorchScript graph where it can (`traced`). Recent texts are memoised.
"""
from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from cachegate.cache.semantic import precision_timing
from cachegate.cache.semantic.encoder_models import (
    PACKAGED,
    load_forward,
    load_model,
    resolve_path,  # noqa: F401 - imported from here elsewhere
)

PRECISIONS = ("auto", "float32", "bfloat16")
CALL_TOKENS = 40   # a forward call's fixed cost in padded tokens' worth (streaming the weights): MiniLM on one
                   # thread, 5.6 ms a call + 0.13 ms a token in bfloat16 (42), 8.1 + 0.25 in float32 (32);
                   # `python -m loadtests.embed_call_cost` measures it on a machine
SPLIT_AT = 32      # a queue this long is encoded in two calls, so the event loop finishes the first half's
                   # lookups (index search, matching) on the other core while the encoder runs the second


def cpu_flags() -> set[str]:
    try:
        return set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return set()


def native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16, AMX) rather than emulating it; bf16 agrees
    with float32 to 1e-4 in cosine."""
    return bool(cpu_flags() & {"avx512_bf16", "amx_bf16"})


def bf16_pays(model: str = PACKAGED, threads: int = 1) -> bool:
    """Whether bfloat16 is the faster precision for the embedder here. With AMX tiles it is, about 3x; without
    native bfloat16 it is not. With AVX512-BF16 alone it depends on the host, so it is timed (`timed_precisions`):
    one EPYC gave 16 questions in 99 ms against 61 ms in float32, another (the same CPU model, 2026-12-07) 58-65 ms
    against 94-106 and one question in 6-7 ms against 10-11. Either way the vectors agree to 1e-4 in cosine."""
    timing = timing_for(model, threads)
    return "amx_bf16" in cpu_flags() if timing is None else timing.bf16_faster


def timing_for(model: str = PACKAGED, threads: int = 1) -> precision_timing.PrecisionTiming | None:
    """The timing `precision: auto` decides by on this CPU (AVX512-BF16 without AMX); None where the CPU's flags
    decide alone."""
    flags = cpu_flags()
    if "amx_bf16" in flags or "avx512_bf16" not in flags:
        return None
    return precision_timing.timed_precisions(model, threads)


def resolve_precision(precision: str, model: str = PACKAGED, threads: int = 1) -> str:
    if precision not in PRECISIONS:
        raise ValueError(f"embedder precision must be one of {PRECISIONS}, not {precision!r}")
    if precision == "auto":
        return "bfloat16" if bf16_pays(model, threads) else "float32"
    return precision


class Embedder:
    def __init__(self, model: str = PACKAGED, max_batch: int = 64, max_wait_ms: float = 2.0,
                 max_chars: int = 2000, cache_size: int = 4096, precision: str = "auto", threads: int = 1,
                 trace: bool = True) -> None:
        self.model_name = model
        self.threads = threads
        self.precision = resolve_precision(precision, model, threads)
        self.max_batch = max_batch
        self.max_wait_s = max_wait_ms / 1000
        self.max_chars = max_chars
        self.cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.cache_size = cache_size
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedder", initializer=self._set_threads)
        self.pending: list[tuple[str, asyncio.Future]] = []
        self.worker: asyncio.Task | None = None
        self.last_arrival = 0.0
        self.batches = 0
        self.encoded = 0
        self._model = None
        self.trace = trace      # run the encoder as one frozen TorchScript graph where it can (`traced`)
        self.split_at = SPLIT_AT
        self._forward = None

    @property
    def dim(self) -> int:
        model = self.model
        return (getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)()

    def _set_threads(self) -> None:
        """Torch threads of the worker thread only (OpenMP's setting is per thread): on shared cores one thread
        beats two that wait on each other, and the event loop keeps a core."""
        if self.threads:
            import torch
            torch.set_num_threads(self.threads)

    @property
    def key(self) -> str:
        """The model and precision: what an embedding memo is keyed by."""
        return f"{self.model_name}@{self.precision}"

    @property
    def model(self):
        if self._model is None:
            self._model = load_model(self.model_name, self.precision)
        return self._model

    @property
    def forward(self):
        if self._forward is None:
            self._forward = load_forward(self.model_name, self.precision, self.trace)
        return self._forward

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-norm float32 embeddings, one row per text (blocking), in the forward calls `batch_plan` picks
        from the texts' token counts."""
        import torch
        texts = [t[: self.max_chars] for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with torch.inference_mode():
            for rows in batch_plan(self.token_counts(texts), self.max_batch):
                features = self.model.preprocess([texts[r] for r in rows])
                out[rows] = self.forward(features).float().numpy()
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def token_counts(self, texts: list[str]) -> list[int]:
        """Each text's length in the model's tokens, as the model will see it (truncated to its window)."""
        if len(texts) <= 1:                 # nothing to group: skip the tokenizer
            return [1] * len(texts)
        model = self.model
        ids = model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)["input_ids"]
        return [len(i) for i in ids]

    async def embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings of `texts`, sharing encode calls with concurrent lookups."""
        loop = asyncio.get_running_loop()
        now = time.perf_counter()
        close_together = now - self.last_arrival < self.max_wait_s
        self.last_arrival = now
        futures = [self._cached_or_queued(t, loop) for t in texts]
        if self.pending and (self.worker is None or self.worker.done()):
            self.worker = asyncio.create_task(self._drain(wait=close_together))
        return np.stack([await f for f in futures]) if futures else np.zeros((0, self.dim), np.float32)

    def _cached_or_queued(self, text: str, loop: asyncio.AbstractEventLoop) -> asyncio.Future:
        future = loop.create_future()
        hit = self.cache.get(text)
        if hit is not None:
            self.cache.move_to_end(text)
            future.set_result(hit)
            return future
        self.pending.append((text, future))
        return future

    async def _drain(self, wait: bool) -> None:
        """Encode what is queued; open a `max_wait_ms` window first when lookups arrive close together."""
        if wait and len(self.pending) < self.max_batch:
            await asyncio.sleep(self.max_wait_s)
        while self.pending:
            take = self.take_size(len(self.pending))
            batch, self.pending = self.pending[:take], self.pending[take:]
            await self._encode_batch(batch)

    def take_size(self, queued: int) -> int:
        """How many queued texts the next encode call takes: all of a short queue; half of a long one (up to
        `max_batch`). One call for 32 concurrent lookups leaves a core idle twice over: the encoder waits while
        the loop searches and matches for all 32, and the loop waits while the encoder runs; two halves overlap
        (a call of 16 short questions costs within 2% of half a call of 32 per question). Measured at 20,000
        entries (searched on the loop): 98-100 -> 141-147 lookups/s from 32 clients; splitting queues of 16
        into 8s lost 10% to the smaller calls."""
        share = queued if queued < self.split_at else (queued + 1) // 2
        return max(1, min(self.max_batch, share))

    async def _encode_batch(self, batch: list[tuple[str, asyncio.Future]]) -> None:
        texts = list(dict.fromkeys(t for t, _ in batch))
        try:
            vectors = await asyncio.get_running_loop().run_in_executor(self.pool, self.encode, texts)
        except Exception as exc:  # noqa: BLE001 - surfaces in every waiting lookup, which degrades to a miss
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        self.batches += 1
        self.encoded += len(texts)
        by_text = dict(zip(texts, vectors))
        for text, future in batch:
            self._remember(text, by_text[text])
            if not future.done():
                future.set_result(by_text[text])

    def _remember(self, text: str, vector: np.ndarray) -> None:
        self.cache[text] = vector
        self.cache.move_to_end(text)
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def batch_plan(tokens: list[int], max_batch: int, call_tokens: int = CALL_TOKENS) -> list[list[int]]:
    """Row indices grouped into forward calls of the least estimated cost, shortest rows first. A call of n rows
    whose longest has L tokens costs `call_tokens + n * L` (its padding included): contiguous runs of the rows
    sorted by length, at most `max_batch` to a call, split where the padding saved outweighs another call
    (dynamic programming over the split points)."""
    order = sorted(range(len(tokens)), key=tokens.__getitem__)
    n = len(order)
    best = [0.0] + [float("inf")] * n       # best[j]: the cheapest plan for the j shortest rows
    start = [0] * (n + 1)                   # where the last call of that plan starts
    for j in range(1, n + 1):
        longest = tokens[order[j - 1]]
        for i in range(max(0, j - max_batch), j):
            cost = best[i] + call_tokens + (j - i) * longest
            if cost < best[j]:
                best[j], start[j] = cost, i
    groups, j = [], n
    while j > 0:
        groups.append(order[start[j]: j])
        j = start[j]
    return groups[::-1]
