"""The matcher's verifier: a cross-encoder reading a question and a cached question together, off the event loop.

Every candidate of one lookup goes into one forward call, and lookups that arrive while the model is busy share
the next call (one worker thread, like the embedder). The model is the packaged MiniLM's first layers with the
matcher's LoRA deltas merged in at load (`cachegate.cache.semantic.matcher_files`).
"""
from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cachegate.cache.semantic.embedder import resolve_precision


class Verifier:
    def __init__(self, folder: str, precision: str = "auto", threads: int = 1, max_pairs: int = 128,
                 trace: bool = True) -> None:
        self.folder = folder
        self.precision = resolve_precision(precision)
        self.threads = threads
        self.max_pairs = max_pairs
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verifier", initializer=self._set_threads)
        self.pending: list[tuple[list[tuple[str, str]], asyncio.Future]] = []
        self.worker: asyncio.Task | None = None
        self.calls = 0        # forward calls made
        self.pairs = 0        # pairs scored
        self.trace = trace    # run the cross-encoder as one frozen TorchScript graph where it can (`traced`)
        self._loaded = None
        self._lock = threading.Lock()

    def _set_threads(self) -> None:
        if self.threads:
            import torch
            torch.set_num_threads(self.threads)

    @property
    def loaded(self):
        """(tokenizer, forward, max_length), loaded on first use: `forward` maps tokenised pairs to first logits."""
        with self._lock:
            if self._loaded is None:
                from cachegate.cache.semantic.matcher_files import load_verifier
                from cachegate.cache.semantic.traced import traced_logits
                tokenizer, model, max_length = load_verifier(self.folder, self.precision)
                forward = (self.trace and traced_logits(tokenizer, model, max_length)) or (
                    lambda features: model(**features).logits[:, 0])
                self._loaded = tokenizer, forward, max_length
            return self._loaded

    def logits(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """The verifier's logit per (question, cached question) pair: one forward call per `max_pairs` (blocking)."""
        import torch
        tokenizer, forward, max_length = self.loaded
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))   # little padding
        out = np.zeros(len(pairs), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(pairs), self.max_pairs):
                rows = order[start: start + self.max_pairs]
                features = tokenizer([pairs[r][0] for r in rows], [pairs[r][1] for r in rows], padding=True,
                                     truncation=True, max_length=max_length, return_tensors="pt")
                out[rows] = forward(features).float().numpy()
                self.calls += 1
                self.pairs += len(rows)
        return out

    async def score(self, question: str, cached: list[str]) -> np.ndarray:
        """Logits of `question` against each cached question, sharing a forward call with concurrent lookups."""
        if not cached:
            return np.zeros(0, dtype=np.float32)
        future = asyncio.get_running_loop().create_future()
        self.pending.append(([(question, c) for c in cached], future))
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self.pending:
            batch, self.pending = self._take()
            await self._run(loop, batch)

    def _take(self) -> tuple[list, list]:
        """The waiting lookups that fit in one call (at least one), and the rest."""
        taken, size = 0, 0
        while taken < len(self.pending) and (taken == 0 or size + len(self.pending[taken][0]) <= self.max_pairs):
            size += len(self.pending[taken][0])
            taken += 1
        return self.pending[:taken], self.pending[taken:]

    async def _run(self, loop: asyncio.AbstractEventLoop, batch: list) -> None:
        pairs = [p for item, _ in batch for p in item]
        try:
            logits = await loop.run_in_executor(self.pool, self.logits, pairs)
        except Exception as exc:  # noqa: BLE001 - every waiting lookup degrades to a miss
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        start = 0
        for item, future in batch:
            if not future.done():
                future.set_result(logits[start: start + len(item)])
            start += len(item)

    def warm(self) -> None:
        """Load the model on the worker thread now, so the first lookup does not pay for it."""
        self.pool.submit(lambda: self.loaded)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
