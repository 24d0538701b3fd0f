"""The engine's tokenizer as xgrammar sees it (`TokenizerInfo`: every token's bytes, the vocab kind,
the stop ids), and the few single-token strings the closing search tries first.
"""
from __future__ import annotations

from dataclasses import dataclass

import xgrammar as xgr

from engine.tokenizer import Tokenizer

# Strings the closing search prefers, in order, outside a JSON string and inside one.
CLOSING_OUTSIDE = ("}", "]", ",", '"', "0", "null", "false", ":", "{", "[")
CLOSING_INSIDE = ('"', "a")
STRING_PROBE = "q"     # accepted inside a free JSON string, never outside one (no literal has a q)


@dataclass
class Vocab:
    info: xgr.TokenizerInfo
    stop_ids: frozenset[int]
    outside: list[int]        # token ids of CLOSING_OUTSIDE that exist as single tokens
    inside: list[int]
    probe: int | None


def build_vocab(tokenizer: Tokenizer, vocab_size: int, stop_ids: list[int]) -> Vocab:
    """Seconds for a large vocabulary (Gemma's 262k): build once per engine, off the event loop."""
    from transformers import PreTrainedTokenizerFast
    hf = PreTrainedTokenizerFast(tokenizer_object=tokenizer.backend)
    info = xgr.TokenizerInfo.from_huggingface(hf, vocab_size=vocab_size, stop_token_ids=list(stop_ids))
    ids = single_token_ids(info)
    pick = lambda strings: [ids[s] for s in strings if s in ids]  # noqa: E731
    return Vocab(info, frozenset(stop_ids), pick(CLOSING_OUTSIDE), pick(CLOSING_INSIDE), ids.get(STRING_PROBE))


def single_token_ids(info: xgr.TokenizerInfo) -> dict[str, int]:
    """The lowest id whose bytes are exactly each wanted string."""
    wanted = {s.encode(): s for s in (*CLOSING_OUTSIDE, *CLOSING_INSIDE, STRING_PROBE)}
    special = set(info.special_token_ids) | set(info.stop_token_ids)
    found: dict[str, int] = {}
    for token_id, raw in enumerate(info.decoded_vocab):
        if raw in wanted and token_id not in special:
            found.setdefault(wanted[raw], token_id)
    return found
