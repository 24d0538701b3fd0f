"""The hits the gateway served lately, by the response id the client saw, so a client can say one was
wrong (`POST /v1/cache/feedback`): bounded, and only the tenant that got the answer can judge it."""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class Served:
    tenant: str
    namespace: str
    tier: str                    # "exact" | "curated" | "semantic"
    key: str                     # the exact key
    entry_id: str | None         # the semantic entry (or curated answer) served
    question: str                # what was asked
    entry_question: str          # what the entry had been asked (the same for an exact hit)
    answer: str


class ServedHits:
    def __init__(self, entries: int = 50_000) -> None:
        self.entries = entries
        self.served: OrderedDict[str, Served] = OrderedDict()

    def add(self, response_id: str, served: Served) -> None:
        self.served[response_id] = served
        if len(self.served) > self.entries:
            self.served.popitem(last=False)

    def take(self, response_id: str, tenant: str) -> Served | None:
        """The hit behind `response_id` if this tenant was served it; judged once, then forgotten."""
        served = self.served.get(response_id)
        if served is None or served.tenant != tenant:
            return None
        del self.served[response_id]
        return served
