"""Action verbs and the actions they say: "cancel", "call off" and "terminate" are one action, "pause" another.

Two questions that ask for different actions want different answers however close their embeddings ("how do I
pause my subscription" / "how do I cancel my subscription"): `policies.differences` vetoes such a pair, and the
matcher's training (`cachegate.matcher_train.actions`) makes minimal pairs from it. A lexicon of plain English
action verbs, leaving out the forms that are nouns as often as verbs ("order", "return", "set").
`asked_verb` finds the verb a question asks to do ("how do I *step down* my plan"), and `unrelated_asked_verbs`
tells two asked verbs apart that WordNet does not relate, an action of the lexicon from another verb ("cancel" /
"step down") or two verbs the lexicon lacks ("lodge" / "follow a complaint"). Pure Python.
"""
from __future__ import annotations

import re
from functools import lru_cache

from policies.tokens import FILLER_ADVERBS, words
from policies.wordnet_verbs import base_form, known, related

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


# What introduces the thing a question asks to do: the verb comes next ("how do I", "help me", "want to")
REQUEST = re.compile(r"\b(?:how (?:do|can|could|would|should|will|may) (?:i|we|you)|how to|help me"
                     r"|(?:want|need|like|have|trying|able|way|steps|possible|going|go) to"
                     r"|(?:can|could|would|will|may) (?:i|you))\s+", re.IGNORECASE)
# verbs too general to say an action: "get my receipt", "find my order", "make use of the line", or that ask
# rather than act ("would you mind repeating", "explain why my card was declined"; "see" is not: WordNet links
# it to "view" and "check", and to nothing of "pay")
LIGHT = frozenset({"be", "is", "are", "am", "get", "make", "do", "have", "go", "know", "find", "use",
                   "take", "put", "give", "tell", "let", "keep", "ask", "try", "help", "say", "need", "want",
                   "like", "come", "work", "look", "please", "start", "stop", "fix", "sort", "deal", "mind",
                   "assist", "figure", "explain"})
# words between a request opening and its verb ("can I still eat it", "how do I just cancel")
BEFORE_VERB = FILLER_ADVERBS | {"also", "please", "quickly", "now", "then", "first"}
# verbs that also say an action but are left out of the lexicon (nouns as often as verbs: "my order", "a
# return"; or asked of other things too: "file", "save"): they never make two actions differ, they only keep the
# WordNet check from calling the pair unrelated ("buy" / "order", "check" / "review")
ALSO: dict[str, tuple[str, ...]] = {
    "buy": ("order",), "send back": ("return",), "check": ("review", "inspect", "look up", "monitor"),
    "submit": ("file", "lodge"), "join": ("register", "enroll", "enrol"), "download": ("save", "export"),
    "transfer": ("wire",), "reset": ("restore", "recover"), "track": ("locate", "monitor"), "share": ("forward",),
}
ALSO_OF = {verb: action for action, verbs in ALSO.items() for verb in verbs}
LONGEST_FORM = 4      # words in the longest action form ("get rid of", "put on hold")


@lru_cache(maxsize=4096)
def asked_verb(text: str) -> str | None:
    """The verb (or verb phrase) after a question's last request opening, the longest that the lexicon or
    WordNet knows: "Please explain how to send back a gift" -> "send back"; None without such an opening."""
    t = text.lower()
    ends = [m.end() for m in REQUEST.finditer(t)]
    if not ends:
        return None
    following = words(t[ends[-1]:])
    while following and following[0] in BEFORE_VERB:
        following = following[1:]
    following = following[:LONGEST_FORM]
    for n in range(len(following), 1, -1):
        phrase = " ".join(following[:n])
        if phrase in ACTION_OF or known(phrase):
            return phrase
    return following[0] if following else None


def unrelated_asked_verbs(a: str, b: str) -> bool:
    """The two questions ask with verbs WordNet does not relate: no form of one (all of an action's forms and its
    `ALSO` verbs where the verb says an action) shares a sense with, links directly to, or has the head verb of a
    form of the other. "cancel my membership" / "step down my membership"; two verbs the lexicon lacks, "lodge a
    complaint" / "follow a complaint". Two actions of the lexicon are `actions_of`'s to compare; general verbs
    (`LIGHT`) and verbs WordNet does not know never veto."""
    va, vb = asked_verb(a), asked_verb(b)
    if va is None or vb is None or (va in ACTION_OF and vb in ACTION_OF):
        return False
    if any(v.split()[0] in LIGHT or not (v in ACTION_OF or known(v)) for v in (va, vb)):
        return False
    fa, fb = forms_of(va), forms_of(vb)
    return not any(related(x, y) or same_head(x, y) for x in fa for y in fb)


def forms_of(verb: str) -> tuple[str, ...]:
    """The verb and, where it says an action of the lexicon (or is one of its `ALSO` verbs), all of that action's."""
    action = ACTION_OF.get(verb) or ALSO_OF.get(verb)
    return ACTIONS[action] + ALSO.get(action, ()) if action else (verb,)


def same_head(x: str, y: str) -> bool:
    """The same head verb, phrasal or not: "print" / "print out"."""
    head = base_form(x.split()[0])
    return head is not None and head == base_form(y.split()[0])
