"""`LLMEngine`: the synchronous core. Loads a model, validates requests, and runs every live request
together: each `step()` schedules a batch (continuous batching, chunked prefill, prefix reuse),
runs one forward pass, samples, and returns a `RequestOutput` per sampled token.
The async API drives it from a worker thread; `generate` / `generate_many` are blocking helpers.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import torch

from engine.config import EngineConfig, dtype_name
from engine.errors import ContextLengthError, EmptyPromptError, EngineError, InvalidTokenError
from engine.guided.spec import GuideSpec
from engine.kv.block_manager import BlockManager, BlockUsage
from engine.loader import DEFAULT_MODEL, load_checkpoint
from engine.model_runner import ModelRunner
from engine.output_processor import OutputProcessor
from engine.outputs import RequestOutput
from engine.sampler import make_generator, sample_batch
from engine.sampling_params import SamplingParams
from engine.scheduler import ScheduledBatch, Scheduler
from engine.sequence import Sequence
from engine.stats import EngineStats, request_metrics
from engine.tokenizer import Tokenizer


class BatchFailed(EngineError, RuntimeError):
    """A forward pass raised; the requests of that batch were aborted, the engine goes on."""

    def __init__(self, seq_ids: list[int], cause: BaseException) -> None:
        super().__init__(f"forward pass failed for {len(seq_ids)} request(s): {cause!r}")
        self.seq_ids, self.cause = seq_ids, cause


class LLMEngine:
    def __init__(self, runner: ModelRunner, tokenizer: Tokenizer, model_name: str) -> None:
        self.runner, self.tokenizer, self.model_name = runner, tokenizer, model_name
        self.config, self.engine_config = runner.config, runner.engine_config
        ec = self.engine_config
        self.blocks = BlockManager(runner.num_blocks, runner.block_size, ec.enable_prefix_caching,
                                   ec.share_prefix_across_tenants)
        self.scheduler = Scheduler(ec, self.blocks)
        self.counters = EngineStats()
        self.seqs: dict[int, Sequence] = {}
        self.processors: dict[int, OutputProcessor] = {}
        self.generators: dict[int, torch.Generator | None] = {}
        self._guides = self._masker = None      # grammar compiler and batch masker, built on first use
        self._guides_lock = threading.Lock()     # requests compile their grammars on several threads

    @classmethod
    def from_pretrained(cls, spec: str | Path = DEFAULT_MODEL, device: str | torch.device = "cpu",
                        dtype: str | torch.dtype = torch.float32, **options) -> LLMEngine:
        """`options`: any `EngineConfig` field (num_kv_blocks, max_num_seqs, enable_prefix_caching...)."""
        dtype = dtype_name(dtype)
        return cls.from_config(EngineConfig(model=str(spec), device=str(device), dtype=dtype, **options))

    @classmethod
    def from_config(cls, config: EngineConfig) -> LLMEngine:
        if config.num_threads:
            torch.set_num_threads(config.num_threads)
        checkpoint = load_checkpoint(config.model)
        return cls(ModelRunner(checkpoint, config), checkpoint.tokenizer, checkpoint.config.name)

    @property
    def max_context(self) -> int:
        """Prompt + completion tokens one request may use: the model's context, capped by
        `max_model_len` and by what the KV pool holds."""
        limits = [self.config.max_context, self.blocks.num_blocks * self.blocks.block_size]
        return min(limits + ([self.engine_config.max_model_len] if self.engine_config.max_model_len else []))

    @property
    def num_running(self) -> int:
        return len(self.scheduler.running)

    @property
    def num_waiting(self) -> int:
        return len(self.scheduler.waiting)

    def has_unfinished(self) -> bool:
        return self.scheduler.has_work

    def validate(self, prompt_token_ids: list[int], params: SamplingParams) -> None:
        """Raise a `RequestValidationError` (a ValueError) for a request that can never run."""
        if not prompt_token_ids:
            raise EmptyPromptError("the prompt is empty")
        if len(prompt_token_ids) + params.max_tokens > self.max_context:
            raise ContextLengthError(len(prompt_token_ids), params.max_tokens, self.max_context)
        if min(prompt_token_ids) < 0 or max(prompt_token_ids) >= self.config.vocab_size:
            raise InvalidTokenError(f"prompt token ids must lie in [0, {self.config.vocab_size})")

    @property
    def guides(self):
        """The grammar compiler (`engine.guided.compiler.GuideCompiler`); loads xgrammar on first use."""
        with self._guides_lock:
            if self._guides is None:
                from engine.guided.compiler import GuideCompiler
                self._guides = GuideCompiler(self.tokenizer, self.config.vocab_size, self.config.eos_token_ids)
            return self._guides

    @property
    def masker(self):
        """The batch masker (`engine.guided.bitmask.BatchMasker`): masks, timings."""
        if self._masker is None:
            from engine.guided.bitmask import BatchMasker
            self._masker = BatchMasker(self.config.vocab_size)
        return self._masker

    def guide_state(self, spec: GuideSpec | None, params: SamplingParams):
        """A fresh grammar state for a request (compiled once per spec, then cached); raises a
        `RequestValidationError` for a bad schema or a max_tokens too small to complete an answer."""
        if spec is None:
            return None
        if params.ignore_eos:
            from engine.guided.errors import GrammarError
            raise GrammarError("ignore_eos cannot be combined with a response format")
        from engine.guided.state import GuideState
        state = GuideState(self.guides.compile(spec))
        state.check_budget(params.max_tokens)
        return state

    def add_request(self, seq: Sequence) -> None:
        self.validate(seq.prompt_token_ids, seq.params)
        if seq.guide is not None:
            seq.guide.check_budget(seq.params.max_tokens)
        self.seqs[seq.seq_id] = seq
        self.processors[seq.seq_id] = OutputProcessor(seq, self.tokenizer, self.config.eos_token_ids)
        self.generators[seq.seq_id] = make_generator(seq.params, self.runner.device)
        self.scheduler.add(seq)

    def abort(self, seq_id: int) -> bool:
        """Drop a request (client gone): its blocks are free (or cached) when this returns."""
        seq = self.seqs.get(seq_id)
        if seq is None:
            return False
        self.scheduler.abort(seq)
        self.counters.requests_aborted += 1
        self.forget(seq)
        return True

    def step(self) -> list[RequestOutput]:
        batch = self.scheduler.schedule()
        self.note_admitted(batch)
        if batch.is_empty:
            return []
        try:
            sampling, logits = self.runner.execute(batch)
        except Exception as exc:  # noqa: BLE001 - the batch's requests fail, the engine goes on
            self.fail(batch, exc)
        for seq, n in batch.scheduled():
            seq.num_computed_tokens += n
        outputs = [self.emit(seq, token) for seq, token in zip(sampling, self.sample(sampling, logits))]
        for seq, _ in batch.scheduled():
            if not seq.is_finished:
                self.blocks.cache_computed(seq)
        self.counters.steps += 1
        return outputs

    def note_admitted(self, batch: ScheduledBatch) -> None:
        now = time.perf_counter()
        for seq in batch.admitted:
            if seq.first_scheduled_time is None:
                seq.first_scheduled_time = now
                seq.prefix_tokens_reused = seq.num_computed_tokens
                self.counters.on_admitted(seq)

    def fail(self, batch: ScheduledBatch, exc: Exception):
        ids = [seq.seq_id for seq, _ in batch.scheduled()]
        for seq_id in ids:
            self.abort(seq_id)
        self.counters.requests_failed += len(ids)
        raise BatchFailed(ids, exc) from exc

    def sample(self, seqs: list[Sequence], logits: torch.Tensor) -> list[int]:
        """Grammar masks on the constrained rows (one call), then the whole batch in one sampler pass
        (greedy rows in one argmax, sampled rows each with their own generator); then each grammar
        follows (or, near the budget, closes) its token."""
        guided = [i for i, s in enumerate(seqs) if s.guide is not None]
        for i in guided:
            seqs[i].guide.ensure(seqs[i].output_token_ids)
        if guided:
            self.masker.apply(logits, guided, [seqs[i].guide for i in guided])
        tokens = sample_batch(logits, [s.params for s in seqs], [self.generators[s.seq_id] for s in seqs])
        if guided:
            self.advance_guides([seqs[i] for i in guided], [tokens[i] for i in guided], guided, tokens)
        return tokens

    def advance_guides(self, seqs: list[Sequence], sampled: list[int], rows: list[int], tokens: list[int]):
        start = time.perf_counter()
        for seq, token, row in zip(seqs, sampled, rows):
            tokens[row] = seq.guide.advance(token, seq.params.max_tokens - seq.num_completion_tokens)
        self.masker.stats.advance_s += time.perf_counter() - start

    def emit(self, seq: Sequence, token: int) -> RequestOutput:
        out = self.processors[seq.seq_id].on_token(token)
        out.seq_id = seq.seq_id
        now = time.perf_counter()
        seq.first_token_time = seq.first_token_time or now
        self.counters.generated_tokens += 1
        if out.finished:
            seq.finish_time = now
            out.metrics = request_metrics(seq)
            self.scheduler.finish(seq)
            self.counters.on_finished(out.metrics)
            self.forget(seq)
        return out

    def forget(self, seq: Sequence) -> None:
        if seq.guide is not None:
            seq.guide.drop()
        for table in (self.seqs, self.processors, self.generators):
            table.pop(seq.seq_id, None)

    def reset_prefix_cache(self) -> int:
        """Evict every cached block no request uses (benchmarks start cold with it); returns how many."""
        cache = self.blocks.cache
        return cache.evict(cache.evictable_blocks) if cache is not None else 0

    def stats(self) -> dict:
        return self.counters.snapshot(self.blocks.usage(), self.blocks.block_size, self.num_running,
                                      self.num_waiting, self.scheduler.num_preemptions)

    def check_integrity(self) -> BlockUsage:
        """free + cached + in use == total, reference counts == holders; nothing in use when idle."""
        usage = self.blocks.check(self.scheduler.running)
        assert self.scheduler.running or usage.in_use == 0, f"idle engine holds blocks: {usage}"
        return usage

    def logits_at_every_position(self, token_ids: list[int]) -> torch.Tensor:
        """fp32 logits [T, V] of a prompt at every position, in blocks borrowed from the pool."""
        blocks = self.blocks.allocate(-(-len(token_ids) // self.blocks.block_size))
        try:
            return self.runner.logits_at_every_position(token_ids, blocks)
        finally:
            self.blocks.allocator.release(blocks)

    # -- blocking helpers ---------------------------------------------------------------------------

    def stream(self, seq: Sequence) -> Iterator[RequestOutput]:
        """Run `seq` (with whatever else is queued) to its finish, yielding its outputs. Closing the
        iterator early aborts it and frees its blocks."""
        self.add_request(seq)
        try:
            while not seq.is_finished:
                yield from (out for out in self.step() if out.seq_id == seq.seq_id)
        finally:
            if not seq.is_finished:
                self.abort(seq.seq_id)

    def generate(self, prompt_token_ids: list[int], params: SamplingParams, guide: GuideSpec | None = None,
                 **kwargs) -> RequestOutput:
        """The whole completion as one output (text, ids, finish reason, usage, metrics)."""
        return self.generate_many([prompt_token_ids], [params], guides=[guide], **kwargs)[0]

    def generate_many(self, prompts: list[list[int]], params: list[SamplingParams] | SamplingParams,
                      tenant: str | None = None, priority: int = 0,
                      guides: list[GuideSpec | None] | None = None) -> list[RequestOutput]:
        """Run several requests together (continuous batching) to their finish; outputs in order.
        `guides[i]`: the grammar request i's output must follow (None: free text)."""
        params = params if isinstance(params, list) else [params] * len(prompts)
        guides = guides or [None] * len(prompts)
        seqs = [Sequence(list(p), sp, tenant=tenant, priority=priority, guide=self.guide_state(g, sp))
                for p, sp, g in zip(prompts, params, guides)]
        pieces: dict[int, list[RequestOutput]] = {s.seq_id: [] for s in seqs}
        for seq in seqs:
            self.add_request(seq)
        while any(not s.is_finished for s in seqs):
            for out in self.step():
                if out.seq_id in pieces:
                    pieces[out.seq_id].append(out)
        return [joined(seq, pieces[seq.seq_id]) for seq in seqs]


def joined(seq: Sequence, outs: list[RequestOutput]) -> RequestOutput:
    last = outs[-1]
    return RequestOutput(seq.request_id, "".join(o.text for o in outs), list(seq.output_token_ids),
                         last.finish_reason, last.prompt_tokens, last.completion_tokens, last.metrics,
                         seq.seq_id)
