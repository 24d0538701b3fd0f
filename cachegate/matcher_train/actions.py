"""Minimal pairs on the action: training questions whose action verb is swapped, so the projection reads the verb.

CLINC's intents are mostly told apart by their object ("my card" / "my bill"), and a projection tuned on them
learns to pay the verb little heed; a customer-service cache then serves "reschedule a pickup" the answer to
"schedule a pickup". For every training question with an action verb, this makes one more triplet: the verb
swapped for a synonym of the same action is the positive ("cancel" -> "call off"; another question of the intent
when the action has a single form) and the verb swapped for another action met on the same objects is the hard
negative ("cancel" -> "pause"). Only the first action verb of a question is swapped; the lexicon is
`policies.actions`.
"""
from __future__ import annotations

import random

from cachegate.matcher_train.pairs import Triplet, by_intent, other_question
from policies.actions import ACTION_OF, ACTIONS, CONTRASTS, VERB


def swapped(text: str, rng: random.Random, same: bool) -> str | None:
    """The text with its first action verb replaced by another form of the same action (`same`) or by a form of
    a contrasting action; None when it has no action verb, or (same) its action has no other form."""
    found = VERB.search(text)
    if not found:
        return None
    form = found.group(1).lower()
    action = ACTION_OF[form]
    if same:
        choices = [f for f in ACTIONS[action] if f != form]
    else:
        near = sorted({a for group in CONTRASTS if action in group for a in group} - {action})
        choices = [f for a in near for f in ACTIONS[a]]
    return text[:found.start()] + rng.choice(choices) + text[found.end():] if choices else None


def minimal_pairs(rows: list[tuple[str, str]], seed: int) -> list[Triplet]:
    """One triplet per (question, intent) row with an action verb: (question, the same action said otherwise,
    another action on the same object), grouped by the intent so a batch holds no other question of it."""
    rng = random.Random(seed)
    intents = by_intent(rows)
    out = []
    for text, intent in rows:
        negative = swapped(text, rng, same=False)
        if negative is None or len(intents[intent]) < 2:
            continue
        positive = swapped(text, rng, same=True) or other_question(rng, intents[intent], text)
        out.append(Triplet(text, positive, negative, intent))
    return out


def texts(triplets: list[Triplet]) -> list[str]:
    """The made-up questions the triplets hold (to embed with the corpus)."""
    return sorted({t.positive for t in triplets} | {t.negative for t in triplets})
