"""The closing search: from a matcher's state, a short run of tokens that makes the output a complete
answer of the grammar (a JSON value closed, a tool call's tags shut).

Greedy, one token at a time: the grammar's forced continuation first (jump-forward), else the first
of a few preferred single tokens the grammar accepts (a closing quote inside a string; `}`, `]`, then
the shortest values outside one), else the lowest allowed token. Not always the shortest run, but any
run it returns is valid: the matcher accepted every token. The matcher is left as it was found.
"""
from __future__ import annotations

import torch
import xgrammar as xgr

from engine.guided.vocab import Vocab


def closing_tokens(matcher: xgr.GrammarMatcher, limit: int, vocab: Vocab) -> list[int] | None:
    """Tokens (at most `limit`) after which `matcher` is complete; None if the search needs more."""
    plan: list[int] = []
    try:
        while not matcher.is_completed():
            token = next_closing_token(matcher, vocab) if len(plan) < limit else None
            if token is None or not matcher.accept_token(token):
                return None
            plan.append(token)
        return plan
    finally:
        if plan:
            matcher.rollback(len(plan))


def next_closing_token(matcher: xgr.GrammarMatcher, vocab: Vocab) -> int | None:
    forced = matcher.find_jump_forward_tokens()
    if forced:
        return forced[0]
    preferred = vocab.inside if in_string(matcher, vocab) else vocab.outside
    for token in preferred:
        if accepts(matcher, token):
            return token
    return lowest_allowed(matcher, vocab)


def in_string(matcher: xgr.GrammarMatcher, vocab: Vocab) -> bool:
    return vocab.probe is not None and accepts(matcher, vocab.probe)


def accepts(matcher: xgr.GrammarMatcher, token: int) -> bool:
    if matcher.accept_token(token):
        matcher.rollback(1)
        return True
    return False


def lowest_allowed(matcher: xgr.GrammarMatcher, vocab: Vocab) -> int | None:
    bitmask = xgr.allocate_token_bitmask(1, vocab.info.vocab_size)
    matcher.fill_next_token_bitmask(bitmask)
    words = bitmask[0].to(torch.int64) & 0xFFFFFFFF
    for word in torch.nonzero(words).flatten().tolist():
        bits = int(words[word])
        for bit in range(32):
            token = word * 32 + bit
            if bits >> bit & 1 and token not in vocab.stop_ids:
                return token
    return None
