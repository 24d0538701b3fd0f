"""`GuideState`: one request's grammar while it runs. Its matcher masks the request's logits and follows
every token it accepts; it is dropped on preemption, finish and abort, and rebuilt by replaying the
request's output when the request samples again.

The budget rule: the state always holds a closing plan (tokens known to complete the answer) no longer
than the tokens left. A sampled token is kept only if the closing search finds a plan from after it
that still fits; otherwise the plan's next token is emitted instead. So an answer cut by max_tokens
(finish_reason "length") is still a complete answer of the grammar.
"""
from __future__ import annotations

import torch
import xgrammar as xgr

from engine.guided.closer import closing_tokens
from engine.guided.compiler import CompiledGuide
from engine.guided.errors import GrammarError


class GuideState:
    def __init__(self, compiled: CompiledGuide) -> None:
        self.compiled = compiled
        self.matcher: xgr.GrammarMatcher | None = None
        self.plan = list(compiled.opening_plan)   # closes the answer from the current state
        self.num_forced = 0                       # tokens the budget chose instead of the sampler
        self.num_replays = 0                      # matchers rebuilt from the output (after preemption)

    def check_budget(self, max_tokens: int) -> None:
        if len(self.plan) > max_tokens:
            raise GrammarError(
                f"max_tokens ({max_tokens}) is too small for this answer's format: a complete answer "
                f"needs up to {len(self.plan)} tokens")

    def ensure(self, output_ids: list[int]) -> xgr.GrammarMatcher:
        """The matcher, rebuilt and replayed over `output_ids` if it was dropped."""
        if self.matcher is None:
            matcher = xgr.GrammarMatcher(self.compiled.grammar)
            for token in output_ids:
                accepted = matcher.accept_token(token)
                assert accepted, f"replay: the grammar rejects token {token} it accepted before"
            self.matcher = matcher
            self.num_replays += bool(output_ids)
        return self.matcher

    def fill(self, bitmask: torch.Tensor, row: int) -> None:
        assert self.matcher is not None, "ensure() before fill()"
        self.matcher.fill_next_token_bitmask(bitmask, row)

    def advance(self, token: int, tokens_left: int) -> int:
        """Accept the sampled `token` (allowed by the mask) or, if the answer could then not close
        within the `tokens_left - 1` tokens after it, the plan's next token. Returns the one accepted."""
        matcher = self.matcher
        assert matcher is not None and tokens_left >= len(self.plan)
        if token in self.compiled.vocab.stop_ids or (self.plan and token == self.plan[0]):
            return self.take(token)
        if not matcher.accept_token(token):
            raise AssertionError(f"the sampler chose token {token}, which the mask forbids")
        plan = self.still_closing(tokens_left - 1) or closing_tokens(matcher, tokens_left - 1, self.compiled.vocab)
        if plan is not None:
            self.plan = plan
            return token
        matcher.rollback(1)
        self.num_forced += 1
        # an empty plan means the answer is already complete: ending it is the way to stay complete
        return self.take(self.plan[0] if self.plan else min(self.compiled.vocab.stop_ids))

    def still_closing(self, limit: int) -> list[int] | None:
        """The old plan (or its tail) if it still closes the answer after the new token: most tokens stay
        inside a string, a number or a key, and checking a plan costs far less than searching one."""
        for plan in (self.plan, self.plan[1:]):
            if plan and len(plan) <= limit and closes(self.matcher, plan):
                return list(plan)
        return None

    def take(self, token: int) -> int:
        accepted = self.matcher.accept_token(token)
        assert accepted, f"the grammar rejects token {token} of its own plan"
        self.plan = [] if token in self.compiled.vocab.stop_ids else self.plan[1:]
        return token

    def drop(self) -> None:
        """Free the matcher (the plan is plain ids and stays: it is still valid after a replay)."""
        self.matcher = None


def closes(matcher: xgr.GrammarMatcher, plan: list[int]) -> bool:
    """Whether `plan` takes `matcher` to a complete answer (the matcher is left as it was)."""
    accepted = 0
    for token in plan:
        if not matcher.accept_token(token):
            break
        accepted += 1
    complete = accepted == len(plan) and matcher.is_completed()
    if accepted:
        matcher.rollback(accepted)
    return complete
