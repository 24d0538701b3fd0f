"""Turning each sampled token into a `RequestOutput`: EOS and max_tokens checks, incremental
detokenization, stop strings, and the final flush of held-back text. An answer whose grammar had to be
closed early for the budget finishes with "length", as one cut by max_tokens does.
"""
from __future__ import annotations

from engine.detokenizer import IncrementalDetokenizer
from engine.outputs import RequestOutput
from engine.sequence import Sequence
from engine.stop_checker import StopChecker
from engine.tokenizer import Tokenizer


class OutputProcessor:
    def __init__(self, seq: Sequence, tokenizer: Tokenizer, eos_token_ids: list[int]) -> None:
        self.seq = seq
        self.eos = set() if seq.params.ignore_eos else set(eos_token_ids)
        self.detok = IncrementalDetokenizer(tokenizer, seq.prompt_token_ids)
        self.stops = StopChecker(seq.params.stop)

    def on_token(self, token_id: int) -> RequestOutput:
        seq = self.seq
        seq.append(token_id)
        text, reason = "", None
        if token_id in self.eos:
            reason = "stop"
        else:
            text = self.stops.feed(self.detok.step(token_id))
            reason = "stop" if self.stops.stopped else None
        if reason is None and seq.num_completion_tokens >= seq.params.max_tokens:
            reason = "length"
        if reason is not None:
            text += self.flush()
            reason = "stop" if self.stops.stopped else reason
            if seq.guide is not None and seq.guide.num_forced:
                reason = "length"          # the budget closed the answer early: cut short, though complete
        seq.finish_reason = reason
        return RequestOutput(seq.request_id, text, [token_id], reason,
                             seq.num_prompt_tokens, seq.num_completion_tokens)

    def flush(self) -> str:
        """Last characters still inside the detokenizer or held back by the stop checker."""
        text = self.stops.feed(self.detok.flush())
        return text + self.stops.flush()
