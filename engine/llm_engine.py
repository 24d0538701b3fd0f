"""`LLMEngine`: the synchronous core. Loads a model, validates requests and runs one sequence from
prefill to its finish, yielding a `RequestOutput` per token. The async API drives it from a thread.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import torch

from engine.config import EngineConfig, parse_dtype
from engine.errors import ContextLengthError, EmptyPromptError, InvalidTokenError
from engine.loader import DEFAULT_MODEL, load_checkpoint
from engine.model_runner import ModelRunner
from engine.output_processor import OutputProcessor
from engine.outputs import RequestOutput
from engine.sampler import make_generator, sample
from engine.sampling_params import SamplingParams
from engine.sequence import Sequence
from engine.tokenizer import Tokenizer


class LLMEngine:
    def __init__(self, runner: ModelRunner, tokenizer: Tokenizer, model_name: str) -> None:
        self.runner, self.tokenizer, self.model_name = runner, tokenizer, model_name
        self.config = runner.config

    @classmethod
    def from_pretrained(cls, spec: str | Path = DEFAULT_MODEL, device: str | torch.device = "cpu",
                        dtype: str | torch.dtype = torch.float32) -> LLMEngine:
        checkpoint = load_checkpoint(spec)
        runner = ModelRunner(checkpoint, device, parse_dtype(dtype))
        return cls(runner, checkpoint.tokenizer, checkpoint.config.name)

    @classmethod
    def from_config(cls, config: EngineConfig) -> LLMEngine:
        return cls.from_pretrained(config.model, config.device, config.dtype)

    @property
    def max_context(self) -> int:
        return self.config.max_context

    def validate(self, prompt_token_ids: list[int], params: SamplingParams) -> None:
        """Raise a `RequestValidationError` (a ValueError) for a request that can never run."""
        if not prompt_token_ids:
            raise EmptyPromptError("the prompt is empty")
        if len(prompt_token_ids) + params.max_tokens > self.max_context:
            raise ContextLengthError(len(prompt_token_ids), params.max_tokens, self.max_context)
        if min(prompt_token_ids) < 0 or max(prompt_token_ids) >= self.config.vocab_size:
            raise InvalidTokenError(f"prompt token ids must lie in [0, {self.config.vocab_size})")

    def stream(self, seq: Sequence) -> Iterator[RequestOutput]:
        """Run `seq` to its finish. Closing the iterator early abandons it and frees its KV cache."""
        self.validate(seq.prompt_token_ids, seq.params)
        cache = self.runner.new_cache(seq.max_tokens_total)
        generator = make_generator(seq.params, self.runner.device)
        processor = OutputProcessor(seq, self.tokenizer, self.config.eos_token_ids)
        logits = self.runner.prefill(seq.prompt_token_ids, cache)            # [V]
        while True:
            token = sample(logits, seq.params, generator)
            out = processor.on_token(token)
            yield out
            if out.finished:
                return
            logits = self.runner.decode(token, seq.num_tokens - 1, cache)

    def generate(self, prompt_token_ids: list[int], params: SamplingParams) -> RequestOutput:
        """Blocking helper: the whole completion as one output (text, ids, finish reason, usage)."""
        seq = Sequence(list(prompt_token_ids), params)
        outs = list(self.stream(seq))
        last = outs[-1]
        return RequestOutput(seq.request_id, "".join(o.text for o in outs), list(seq.output_token_ids),
                             last.finish_reason, last.prompt_tokens, last.completion_tokens)
