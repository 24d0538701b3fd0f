"""Incremental detokenizer: token ids in, text deltas out, never half a UTF-8 character.

Decodes a short window of ids (a few tokens of context + the unread ones) and emits the new suffix
only once it no longer ends in U+FFFD, i.e. once a multi-byte character is complete.
"""
from __future__ import annotations

from engine.tokenizer import Tokenizer

CONTEXT_TOKENS = 5  # prompt tokens kept as left context (leading-space rules of some decoders)


class IncrementalDetokenizer:
    def __init__(self, tokenizer: Tokenizer, prompt_ids: list[int]) -> None:
        self.tokenizer = tokenizer
        self.ids = list(prompt_ids[-CONTEXT_TOKENS:])
        self.prefix = 0              # window start
        self.read = len(self.ids)    # ids before this are already emitted

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def pending(self) -> str:
        """Text of the unread ids, measured against the decoded context window."""
        shown = self.decode(self.ids[self.prefix:self.read])
        full = self.decode(self.ids[self.prefix:])
        return full[len(shown):]

    def step(self, token_id: int) -> str:
        self.ids.append(token_id)
        new = self.pending()
        if not new or new.endswith("\ufffd"):
            return ""
        self.prefix, self.read = self.read, len(self.ids)
        return new

    def flush(self) -> str:
        """At the end of a request: whatever is left, incomplete characters included (as U+FFFD)."""
        new = self.pending()
        self.prefix, self.read = self.read, len(self.ids)
        return new
