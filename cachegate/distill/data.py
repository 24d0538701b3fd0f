"""From logged entries to training examples: the small model's own prompt tokens (its chat template, as
the gateway serves it) followed by the large model's answer and the end-of-turn token, with the loss on
the answer only. Repeats are dropped; a seeded hash of each request puts it in the train or held-out slice.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cachegate.distill.entry import AnswerEntry
from engine.tokenizer import Tokenizer


@dataclass(frozen=True)
class Example:
    ids: list[int]          # prompt + answer (+ end of turn)
    answer_from: int        # the first answer token; the loss covers ids[answer_from:]


def unique(entries: list[AnswerEntry]) -> list[AnswerEntry]:
    """One entry per request (the latest), in log order."""
    latest = {e.request_key: e for e in entries}
    return list(latest.values())


def split(entries: list[AnswerEntry], held_out: float, seed: int) -> tuple[list[AnswerEntry], list[AnswerEntry]]:
    """(train, held-out): each request lands on one side by a seeded hash, whatever the log's order."""
    def side(e: AnswerEntry) -> float:
        digest = hashlib.sha256(f"{seed}:{e.request_key}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2 ** 64
    train = [e for e in entries if side(e) >= held_out]
    return train, [e for e in entries if side(e) < held_out]


def prompt_ids(tokenizer: Tokenizer, entry: AnswerEntry) -> list[int]:
    """The prompt as the in-process backend builds it for the small model."""
    if entry.prompt is not None:
        return tokenizer.encode(entry.prompt)
    return tokenizer.apply_chat_template(entry.messages, add_generation_prompt=True)


def example(tokenizer: Tokenizer, entry: AnswerEntry, stop_ids: list[int], max_len: int) -> Example | None:
    prompt = prompt_ids(tokenizer, entry)
    answer = tokenizer.encode(entry.answer.strip(), add_special_tokens=False)
    if entry.messages is not None:
        turn = entry.messages + [{"role": "assistant", "content": entry.answer.strip()}]
        whole = tokenizer.apply_chat_template(turn, add_generation_prompt=False)
        if whole[:len(prompt)] == prompt:
            answer = whole[len(prompt):]
    ends = [i for i, t in enumerate(answer) if t in stop_ids]
    answer = answer[:ends[0] + 1] if ends else answer + stop_ids[:1]
    ids = prompt + answer
    return Example(ids, len(prompt)) if len(ids) <= max_len and len(answer) > 1 else None


def examples(tokenizer: Tokenizer, entries: list[AnswerEntry], stop_ids: list[int],
             max_len: int = 512) -> list[Example]:
    """Those entries that make an example: a conversation the chat template renders, within `max_len`."""
    out = []
    for entry in entries:
        try:
            x = example(tokenizer, entry, stop_ids, max_len)
        except Exception:  # noqa: BLE001 - e.g. a role order the small model's template refuses
            x = None
        if x is not None:
            out.append(x)
    return out
