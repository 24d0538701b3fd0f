"""Minimal pairs on the action: training questions whose action verb is swapped, so the projection reads the verb.

CLINC's intents are mostly told apart by their object ("my card" / "my bill"), and a projection tuned on them
learns to pay the verb little heed; a customer-service cache then serves "reschedule a pickup" the answer to
"schedule a pickup". For every training question with an action verb, this makes one more triplet: the verb
swapped for a synonym of the same action is the positive ("cancel" -> "call off"; another question of the intent
when the action has a single form) and the verb swapped for another action met on the same objects is the hard
negative ("cancel" -> "pause"). Only the first action verb of a question is swapped; a lexicon of plain English
verbs, leaving out the forms that are nouns as often as verbs ("order", "return", "set").
"""
from __future__ import annotations

import random
import re

from cachegate.matcher_train.pairs import Triplet, by_intent, other_question

ACTIONS: dict[str, tuple[str, ...]] = {       # an action and the verb forms that say it
    "cancel": ("cancel", "call off", "terminate"),
    "pause": ("pause", "put on hold", "suspend"),
    "resume": ("resume", "restart", "unpause"),
    "remove": ("remove", "delete", "erase", "get rid of"),
    "add": ("add", "create"),
    "set up": ("set up",),
    "change": ("change", "modify", "edit", "update"),
    "check": ("check", "view", "look at"),
    "track": ("track", "trace"),
    "submit": ("submit", "send in"),
    "transfer": ("transfer", "hand over"),
    "enable": ("enable", "turn on", "switch on", "activate"),
    "disable": ("disable", "turn off", "switch off", "deactivate"),
    "schedule": ("schedule", "book", "arrange"),
    "reschedule": ("reschedule", "rebook"),
    "lock": ("lock", "freeze"),
    "unlock": ("unlock", "unfreeze", "unblock"),
    "open": ("open",),
    "close": ("close", "shut down"),
    "buy": ("buy", "purchase"),
    "send back": ("send back",),
    "download": ("download",),
    "print": ("print",),
    "upgrade": ("upgrade", "move up"),
    "downgrade": ("downgrade", "move down"),
    "renew": ("renew", "extend"),
    "report": ("report", "flag"),
    "verify": ("verify", "confirm", "validate"),
    "reset": ("reset",),
    "pay": ("pay", "settle"),
    "refund": ("refund",),
    "send": ("send",),
    "receive": ("receive",),
    "deposit": ("deposit",),
    "withdraw": ("withdraw",),
    "increase": ("increase", "raise"),
    "decrease": ("decrease", "lower", "reduce"),
    "split": ("split", "divide"),
    "merge": ("merge", "combine"),
    "apply": ("apply", "redeem"),
    "share": ("share",),
    "join": ("join", "sign up for"),
    "leave": ("leave", "quit"),
}

CONTRASTS: tuple[tuple[str, ...], ...] = (    # actions met on the same objects: each is the others' hard negative
    ("cancel", "pause", "resume", "renew", "upgrade", "downgrade", "change", "check", "transfer", "schedule",
     "reschedule"),
    ("enable", "disable", "change", "check", "reset", "set up"),
    ("add", "remove", "change", "check", "download", "print", "share"),
    ("submit", "track", "cancel", "check", "report"),
    ("lock", "unlock", "reset", "change", "verify", "report"),
    ("buy", "send back", "cancel", "track", "change", "split", "merge"),
    ("pay", "refund", "send", "receive", "deposit", "withdraw", "transfer", "check"),
    ("increase", "decrease", "check", "set up", "change"),
    ("join", "leave", "open", "close"),
    ("apply", "verify", "remove", "check"),
)

ACTION_OF = {form: action for action, forms in ACTIONS.items() for form in forms}
VERB = re.compile(r"\b(" + "|".join(sorted(map(re.escape, ACTION_OF), key=len, reverse=True)) + r")\b",
                  re.IGNORECASE)


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
