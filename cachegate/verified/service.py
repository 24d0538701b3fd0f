"""The verified-hits service the routes talk to: after each hit it remembers what was served (for
feedback) and may start a shadow check; feedback and shadow verdicts go to the target controller and
the label store. Built from `cache.semantic.verify*` settings (`build`)."""
from __future__ import annotations

import logging
from dataclasses import dataclass

from cachegate.backends.base import BackendRequest
from cachegate.cache.semantic.entry import parse_id
from cachegate.errors import APIError
from cachegate.telemetry.ledger import Ledger
from cachegate.verified.controller import TargetController
from cachegate.verified.labels import Label, VerifiedLabels
from cachegate.verified.served import Served, ServedHits
from cachegate.verified.shadow import AnswerComparator, ShadowChecks

log = logging.getLogger(__name__)


@dataclass
class Verification:
    gateway: object                    # cachegate.pipeline.Gateway: its tiers are invalidated on feedback
    served: ServedHits
    controller: TargetController
    shadow: ShadowChecks
    labels: VerifiedLabels
    ledger: Ledger                     # the entry ledger: an invalidated entry leaves it

    def after_hit(self, response_id: str, request: BackendRequest, outcome, namespace: str, question: str) -> None:
        """A hit has been sent: remember it for feedback; a semantic hit may be re-asked in the background."""
        answer = outcome.answer
        tier = outcome.cache.removeprefix("hit-")          # exact | curated | semantic
        matched = outcome.matched if tier != "exact" else question
        served = Served(request.tenant, namespace, tier, outcome.key, outcome.entry_id, question, matched, answer.text)
        self.served.add(response_id, served)
        if tier != "exact" and not answer.tool_calls:
            self.shadow.maybe(namespace, outcome.route, request, answer.text,
                              lambda good: self.verdict(served, good, "shadow"))

    def verdict(self, served: Served, good: bool, source: str) -> None:
        """Semantic and curated hits count for their namespace (a question matched to an answer)."""
        if served.tier != "exact":
            self.controller.record(served.namespace, good, source)
            self.labels.add(Label(served.tenant, served.namespace, served.question, served.entry_question, good,
                                  source))

    async def feedback(self, tenant: str, response_id: str, good: bool) -> dict:
        """A client's verdict on an answer it was served from the cache: a wrong one is invalidated (a curated
        answer is the operators' to change: its wrong match is counted, the answer kept)."""
        served = self.served.take(response_id, tenant)
        if served is None:
            raise APIError(f"No cached answer with id '{response_id}' was served to you recently", status=404,
                           type="not_found_error", param="id", code="unknown_response")
        self.verdict(served, good, "feedback")
        invalidated = [] if good else await self._invalidate(served)
        return {"id": response_id, "tier": served.tier, "good": good, "invalidated": invalidated}

    async def _invalidate(self, served: Served) -> list[str]:
        gateway = self.gateway
        if served.tier == "semantic" and gateway.semantic is not None and served.entry_id:
            await gateway.semantic.delete([parse_id(served.entry_id)])
            self.ledger.forget(served.entry_id)
            return [served.entry_id]
        if served.tier == "exact" and gateway.exact is not None and await gateway.exact.delete(served.key):
            self.ledger.forget(served.key)
            return [served.key]
        return []

    def view(self) -> dict:
        return self.controller.view() | {"shadow": dict(self.shadow.counts), "labels": len(self.labels.labels)}

    def close(self) -> None:
        self.shadow.close()


def build(settings, gateway, ledger: Ledger) -> Verification | None:
    """None without a semantic tier (exact hits are never wrong about the question they answer)."""
    tier = gateway.semantic
    if tier is None:
        return None
    cfg = settings.cache.semantic
    v = cfg.verify
    targets = {n: s.target_false_hit_rate for n, s in cfg.namespaces.items() if s.target_false_hit_rate}
    rates = {n: s.verify_rate for n, s in cfg.namespaces.items() if s.verify_rate is not None}
    default_target = getattr(tier.policy, "target", None) or v.target
    controller = TargetController(tier, targets, default_target, v.min_evidence, v.loosen_evidence, v.window)
    shadow = ShadowChecks(gateway.backends, AnswerComparator(tier.embedder.embed, v.answer_similarity),
                          cfg.verify_rate, rates, v.per_minute, v.busy_at)
    return Verification(gateway, ServedHits(v.served_entries), controller, shadow,
                        VerifiedLabels(v.max_labels, v.labels_path), ledger)
