"""Answers of a served model to logged requests, and its decode speed: the engine the gateway runs
(greedy, batched), with the prompts the in-process backend would build.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from cachegate.distill.data import prompt_ids
from cachegate.distill.entry import AnswerEntry
from engine.sampling_params import SamplingParams


@dataclass
class Answers:
    texts: list[str]
    completion_tokens: int
    seconds: float

    @property
    def tokens_per_s(self) -> float:
        return round(self.completion_tokens / max(self.seconds, 1e-9), 1)


def load(spec: str, dtype: str = "auto", max_num_seqs: int = 16):
    from engine import LLMEngine
    return LLMEngine.from_pretrained(spec, device="cpu", dtype=dtype, max_num_seqs=max_num_seqs)


def answer(engine, entries: list[AnswerEntry], max_tokens: int = 96) -> Answers:
    """Greedy answers to every entry, run together as the engine batches them."""
    tok = engine.tokenizer
    prompts = [prompt_ids(tok, e) for e in entries]
    params = [SamplingParams(max_tokens=e.max_tokens or max_tokens, temperature=0,
                             stop=list(tok.chat_stop) if e.messages is not None else []) for e in entries]
    started = time.perf_counter()
    outs = engine.generate_many(prompts, params)
    seconds = time.perf_counter() - started
    return Answers([o.text.strip() for o in outs], sum(o.completion_tokens for o in outs), seconds)


def decode_speed(engine, entries: list[AnswerEntry], new_tokens: int = 64) -> float:
    """Tokens/s of a fixed-length greedy decode of the same prompts (EOS ignored): comparable across models."""
    prompts = [prompt_ids(engine.tokenizer, e) for e in entries]
    params = SamplingParams(max_tokens=new_tokens, temperature=0, ignore_eos=True)
    started = time.perf_counter()
    outs = engine.generate_many(prompts, params)
    return round(sum(o.completion_tokens for o in outs) / (time.perf_counter() - started), 1)
