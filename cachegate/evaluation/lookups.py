"""Questions stored in and looked up through a real semantic tier, as a chat request would be."""
from __future__ import annotations

from cachegate.backends.base import BackendRequest, Sampling, Usage
from cachegate.cache.answer import CachedAnswer
from cachegate.cache.semantic.tier import SemanticTier


def request_for(question: str, context: tuple[str, str] | None = None) -> BackendRequest:
    earlier = [{"role": "user", "content": context[0]}, {"role": "assistant", "content": context[1]}] if context \
        else []
    return BackendRequest(model="eval", params=Sampling(), messages=earlier + [
        {"role": "user", "content": question}])


async def store(tier: SemanticTier, question: str, answer: str, context: tuple[str, str] | None = None) -> None:
    lookup = await tier.prepare("chat", request_for(question, context), "default")
    await tier.put(lookup, CachedAnswer(answer, "stop", "eval", Usage()))


async def served(tier: SemanticTier, question: str, context: tuple[str, str] | None = None) -> str | None:
    """The answer text the tier serves for the question, or None on a miss."""
    found = await tier.lookup("chat", request_for(question, context))
    return found.hit.entry.answer.text if found and found.hit else None
