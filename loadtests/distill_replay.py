"""Held-out logged requests replayed through a live gateway to one named model: its answers, as the
gateway serves them (greedy, the logged max_tokens), for agreement with the large model's logged answers."""
from __future__ import annotations

import asyncio

import aiohttp

from cachegate.distill.entry import AnswerEntry


async def ask(http: aiohttp.ClientSession, url: str, model: str, entry: AnswerEntry, gate: asyncio.Semaphore) -> str:
    body = {"model": model, "messages": entry.messages, "temperature": 0, "max_tokens": entry.max_tokens or 96}
    async with gate, http.post(f"{url}/v1/chat/completions", json=body,
                               headers={"cache-control": "no-cache, no-store"}) as r:
        r.raise_for_status()
        return ((await r.json())["choices"][0]["message"]["content"] or "").strip()


async def replay_all(url: str, model: str, entries: list[AnswerEntry], concurrency: int) -> list[str]:
    gate = asyncio.Semaphore(concurrency)
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        return list(await asyncio.gather(*(ask(http, url, model, e, gate) for e in entries)))


def replay(url: str, model: str, entries: list[AnswerEntry], concurrency: int = 8) -> list[str]:
    """Chat entries only (completions are not replayed); answers in the entries' order."""
    return asyncio.run(replay_all(url, model, [e for e in entries if e.messages is not None], concurrency))
