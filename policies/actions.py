"""Action verbs and the actions they say: "cancel", "call off" and "terminate" are one action, "pause" another.

Two questions that ask for different actions want different answers however close their embeddings ("how do I
pause my subscription" / "how do I cancel my subscription"): `policies.differences` vetoes such a pair, and the
matcher's training (`cachegate.matcher_train.actions`) makes minimal pairs from it. A lexicon of plain English
action verbs, leaving out the forms that are nouns as often as verbs ("order", "return", "set").
Pure Python.
"""
from __future__ import annotations

import re
from functools import lru_cache

from policies.tokens import words

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


DETERMINERS = frozenset({"a", "an", "the", "my", "your", "our", "his", "her", "their", "its", "this", "that",
                         "these", "those", "any", "each", "every", "some", "no", "another"})
VERB_SLOT = frozenset({"to", "i", "we", "you", "they", "me", "us", "please", "and", "or", "not", "can", "will",
                       "should", "would", "could", "do", "did", "must", "may", "might", "then", "also"})


def noun_use(before: str) -> bool:
    """A verb form used as a noun, told by what precedes it: a determiner ("my purchase", "a transfer") or a
    determiner and one more word that cannot stand before a verb ("my last purchase", "a bank transfer")."""
    w = words(before)[-2:]
    return bool(w) and (w[-1] in DETERMINERS or (len(w) == 2 and w[0] in DETERMINERS and w[1] not in VERB_SLOT))


@lru_cache(maxsize=4096)
def actions_of(text: str, verbs_only: bool = False) -> frozenset[str]:
    """The actions a text's action verbs say; `verbs_only` leaves out the forms used as nouns ("trace my purchase":
    track and buy, or track alone)."""
    return frozenset(ACTION_OF[m.group(1).lower()] for m in VERB.finditer(text)
                     if not (verbs_only and noun_use(text[:m.start()])))
