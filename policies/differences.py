"""What differs between two questions in a way that changes the answer, however close their embeddings:
numbers, named things, negation, opposite words ("enable" / "disable"), different actions ("pause" / "cancel my
subscription", `policies.actions`) and swapped roles ("from A to B" / "from B to A"). The calibrated policy never serves an entry when one of these fires; `relation` also says
when two questions differ only in function words, or not at all.
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from policies.actions import actions_of, unrelated_asked_verbs
from policies.tokens import (
    FILLER_ADVERBS,
    STOP,
    content_sequence,
    names,
    numbers,
    past,
    person,
    question_word,
    stem,
    words,
)
from policies.wordnet_verbs import base_form

NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "nobody", "neither", "nor"})
REPLIES = frozenset({"yes", "no"})   # "No, it does not exist": a reply, not a negation
# "I don't know how to ...", "not sure what ...", "no idea where ...": the speaker's doubt, not the question's
HEDGES = frozenset({"know", "sure", "certain", "idea", "clue"})
# Words that say with a word what a negation says: "the top up failed" / "the top up didn't go through", "I lost
# my phone" / "I cannot find my phone", "that is the wrong answer" / "that isn't the right answer".
NEGATIVE = frozenset({"fail", "fails", "failed", "failing", "failure", "unsuccessful", "unable", "missing", "broken",
                      "stuck", "declined", "rejected", "refused", "denied", "lost", "unsure", "wrong", "incorrect",
                      "unusable", "damaged"})
# Verbs of wanting and minding: "I don't need the reservation anymore" asks to cancel it, "don't forget to set an
# alarm" asks to set one; a negated event ("my refund hasn't arrived") reports a problem.
WISHES = frozenset({"need", "want", "forget", "understand", "like", "remember", "care", "mind", "wish"})
WANTING = frozenset({"need", "want", "like", "wish", "care"})     # "don't forget to set it" still asks to set it
# "not" and "no" negate the next word that carries meaning ("I do not really need ..." -> "need"); "never",
# "nobody", "nothing" speak of an event as a whole ("nobody told me", "it never showed up").
SCOPED_NEGATIONS = frozenset({"not", "no"})
NEGATION_SKIPS = STOP | NEGATIONS | FILLER_ADVERBS | {"yet", "very", "too", "quite", "longer", "always"}
ASKING = frozenset({"how", "what", "where", "when", "why", "which", "who", "if", "whether"})
DIRECTIONAL = frozenset({"to", "into", "than", "from", "over", "onto", "towards", "toward"})
_PAIRS = ("enable disable, upgrade downgrade, increase decrease, buy sell, import export, before after, "
          "add remove, open close, start stop, win lose, maximum minimum, max min, best worst, more less, "
          "most least, advantage disadvantage, pro con, up down, input output, high low, higher lower, "
          "cheap expensive, male female, man woman, men women, boy girl, husband wife, first last, old new, "
          "older younger, lock unlock, subscribe unsubscribe, include exclude, accept reject, allow block, "
          "deposit withdraw, send receive, upload download, encrypt decrypt, login logout, on off, in out, "
          "hot cold, positive negative, true false, agree disagree, like dislike, legal illegal, pass fail, "
          "private public, debit credit, borrow lend, arrive depart, push pull, good bad, easy hard, fast slow, "
          "early late, north south, east west, left right, top bottom, inside outside, mother father, "
          "son daughter, brother sister, import export, install uninstall, connect disconnect, show hide, "
          "follow unfollow, block unblock, mute unmute, gain lose, rise fall, strong weak, big small, "
          "large small, long short, heavy light, full empty, wet dry, rich poor, success failure, with without")
OPPOSITES = {stem(w): stem(o) for pair in _PAIRS.split(", ") for a, b in [pair.split()] for w, o in ((a, b), (b, a))}
SYMMETRIC = frozenset({"and", "or", "vs", "versus", "nor", "with"})
MAX_SWAP_WORDS = 40
SLOTS = frozenset({"numbers", "names"})       # vetoes on a value the question fills in rather than on what it asks
VERDICTS = REPLIES | {"true", "false", "correct", "incorrect", "right", "wrong"}
_PREFIXES = ("un", "dis", "in", "im", "il", "ir", "non")


TEXTS_MEMOISED = 4096         # questions whose keys are kept (about 3.5 kB each): a lookup compares one question
                             # with all its candidates, and hot entries come back lookup after lookup
SAME_WORDS_MIN_COSINE = 0.9    # symbols the words leave out ("# and ##" vs "() and (,)") still move the embedding
SAME_WORDING_MIN_COSINE = 0.95


class Relation(NamedTuple):
    kind: str                  # "differs", "same words", "same wording" or "other"
    vetoes: tuple[str, ...] = ()


class Keys(NamedTuple):
    """What the vetoes read of one question, worked out once per text (`keys_of`)."""
    words: tuple[str, ...]
    numbers: frozenset[str]
    names: frozenset[str]
    seen: frozenset[str]                      # its words and their stems
    stems: frozenset[str]
    negated: bool
    negative: bool                            # says something with a negative word (`NEGATIVE`)
    negates: frozenset[str] | None            # the words its negations negate, and their stems; None: one is unscoped
    roles: frozenset[tuple[str, str, str]]    # (before, directional word, after)


@lru_cache(maxsize=TEXTS_MEMOISED)
def keys_of(text: str) -> Keys:
    w = words(text)
    stems = frozenset(stem(t) for t in w)
    targets = negated_words(w)
    return Keys(tuple(w), frozenset(numbers(text)), frozenset(names(text)), frozenset(w) | stems, stems,
                negated(w), not NEGATIVE.isdisjoint(w),
                None if targets is None else frozenset(targets) | {stem(t) for t in targets}, frozenset(role_pairs(w)))


def relation(a: str, b: str, cosine: float) -> Relation:
    """How two questions relate, most decisive first: a key difference, the same words, the same wording."""
    vetoes = key_differences(a, b)
    if vetoes:
        return Relation("differs", tuple(vetoes))
    if cosine >= SAME_WORDS_MIN_COSINE and keys_of(a).words == keys_of(b).words and keys_of(a).words:
        return Relation("same words")
    if cosine >= SAME_WORDING_MIN_COSINE and same_wording(a, b):
        return Relation("same wording")
    return Relation("other")


def key_differences(a: str, b: str) -> list[str]:
    """The names of the vetoes that fire for this pair (empty: nothing key differs)."""
    ka, kb = keys_of(a), keys_of(b)
    checks = {"numbers": ka.numbers != kb.numbers, "names": names_differ(ka, kb),
              "negation": negation_differs(ka, kb), "opposites": opposites(ka.stems, kb.stems),
              "action": actions_differ(a, b), "direction": swapped(ka, kb)}
    return [name for name, fired in checks.items() if fired]


def slots_spanned(entry: str, vetoes: tuple[str, ...], others: list[str]) -> bool:
    """Every veto is a slot (numbers, names) in which `entry` differs from one of `others`, cached questions given
    the same answer: "a table for 4 at 7" and "a table for 6 at 8pm" got one answer, so the number a third
    question asks for does not decide it either."""
    return bool(vetoes) and SLOTS.issuperset(vetoes) and \
        all(any(v in key_differences(entry, o) for o in others) for v in vetoes)


def by_chance(answer: str, free_text_words: int = 8) -> bool:
    """A short answer that two questions can get by chance, so sharing it says nothing about whether their numbers
    or names mattered: a number, a verdict or a name ("42", "Yes.", "Bonn", "It is 7 pm."), or any short answer
    written as a model writes one, from a capital. Free text (`free_text_words` or more) shared word for word is a
    canned answer; a short lower-case label ("restaurant_reservation") names a class of questions."""
    w = words(answer)
    if len(w) >= free_text_words:
        return False
    text = answer.strip()
    return not text or bool(numbers(answer)) or VERDICTS.issuperset(w) or text[0].isupper()


def actions_differ(a: str, b: str) -> bool:
    """Both ask for an action and no action is on both sides ("pause" / "cancel", not "call off" / "cancel"),
    counting every form or only those used as verbs: "look at my purchase" / "trace my purchase" share a noun,
    not an action; or the two ask with verbs WordNet does not relate ("cancel" / "step down", "lodge" / "follow a
    complaint")."""
    def disjoint(x: frozenset[str], y: frozenset[str]) -> bool:
        return bool(x) and bool(y) and not x & y
    return disjoint(actions_of(a), actions_of(b)) or disjoint(actions_of(a, True), actions_of(b, True)) \
        or unrelated_asked_verbs(a, b)


def same_wording(a: str, b: str) -> bool:
    """The same content words in the same order, asked of the same person, in the same tense, with the same
    question word: "How do I reset my password?" / "How can I reset my password?"."""
    wa, wb = words(a), words(b)
    return bool(wa) and content_sequence(wa) == content_sequence(wb) and person(wa) == person(wb) \
        and past(wa) == past(wb) and question_word(wa) == question_word(wb)


def names_differ(ka: Keys, kb: Keys) -> bool:
    """A named thing (capitalised word, acronym) on one side that the other side does not mention at all."""
    return any(n not in kb.seen and stem(n) not in kb.seen for n in ka.names) or \
        any(n not in ka.seen and stem(n) not in ka.seen for n in kb.names)


def negation_differs(ka: Keys, kb: Keys) -> bool:
    """One side is negated and the other is not, and nothing on the plain side says the same otherwise. A negation of
    a whole event differs ("nobody told me", "it never arrived"). A negative word on the plain side says what the
    negation says ("my card is broken" / "my card doesn't work"), unless the negation undoes it ("my top up
    failed" / "my top up didn't fail"). Then it differs when what is negated is on the other side too ("my card
    works" / "my card doesn't work"), not when it is a wish ("I don't need the reservation anymore" / "cancel my
    reservation"), and otherwise it does: "my refund hasn't arrived" is a problem, "how do I get a refund" is not."""
    if ka.negated == kb.negated:
        return False
    plain, negative = (kb, ka) if ka.negated else (ka, kb)
    negates = negative.negates
    if negates is None:
        return True
    if plain.negative and not negative.negative:
        return False
    if not negates.isdisjoint(plain.seen) or any(base_form(w) in negates for w in plain.words):
        return True
    return not negates <= WISHES


def negated(tokens: list[str]) -> bool:
    """An odd number of negations that negate what is asked: a leading reply, a hedge ("I don't know how to
    reset it", "not sure what to do") and a condition ("add milk if it is not already there", "whether or
    not") do not."""
    return len(counted_negations(tokens)) % 2 == 1


def counted_negations(tokens: list[str]) -> list[int]:
    """Where the negations that negate what is asked stand: not a leading reply, a hedge or a condition."""
    start = 1 if tokens and tokens[0] in REPLIES else 0
    return [i for i, t in enumerate(tokens) if i >= start and t in NEGATIONS
            and not hedge(tokens, i) and not conditional(tokens, i)]


def negated_words(tokens: list[str]) -> list[str] | None:
    """The word each counted negation negates: the next one that is not a function word or an adverb of degree
    ("I do not really need it" -> "need"). None when a negation is one of a whole event ("never", "nobody")."""
    out = []
    for i in counted_negations(tokens):
        if tokens[i] not in SCOPED_NEGATIONS:
            return None
        j = next((k for k in range(i + 1, len(tokens)) if tokens[k] not in NEGATION_SKIPS), None)
        if j is None:
            continue
        out.append(tokens[j])
        if tokens[j] in WANTING and tokens[j + 1: j + 2] == ["to"] and j + 2 < len(tokens):
            out.append(tokens[j + 2])             # "I don't want to cancel it" negates the cancelling too
    return out


def hedge(tokens: list[str], i: int) -> bool:
    """The negation at i is "not sure / don't know / no idea" followed by what is asked ("how", "where", "if")."""
    for k in range(i + 1, min(i + 3, len(tokens) - 1)):
        if tokens[k] in HEDGES:
            return tokens[k + 1] in ASKING
    return False


def conditional(tokens: list[str], i: int) -> bool:
    """ "if not", "whether or not", "if it is not already ...": a condition on the request, not its negation."""
    if tokens[i] == "not" and i and tokens[i - 1] in ("if", "or"):
        return True
    return "already" in tokens[i + 1: i + 3] and "if" in tokens[max(0, i - 4): i]


def opposites(sa: frozenset[str], sb: frozenset[str]) -> bool:
    """A word (stemmed) on one side whose opposite (listed, or un-/dis-/in- prefixed) is on the other side only."""
    only_a, only_b = sa - sb, sb - sa
    return any(OPPOSITES.get(w) in only_b or negative_form(w, only_b) for w in only_a) or \
        any(negative_form(w, only_a) for w in only_b)


def negative_form(word: str, others: set[str]) -> bool:
    """'satisfied' / 'unsatisfied', 'like' / 'dislike': one word is the other with a negating prefix."""
    return len(word) >= 4 and any(p + word in others for p in _PREFIXES)


def swapped(ka: Keys, kb: Keys) -> bool:
    """Roles swapped: "from A to B" / "from B to A", or the same content words with two blocks exchanged
    ("do Indian women find Pakistani men ..." / "do Pakistani women find Indian men ...")."""
    return directional_swap(ka.roles, kb.roles) or block_swap(ka.words, kb.words)


def directional_swap(roles_a: frozenset, roles_b: frozenset) -> bool:
    """ "X to Y" on one side, "Y to X" on the other (X, Y the content words next to the directional word)."""
    return any((y, d, x) in roles_b for x, d, y in roles_a if x != y)


def role_pairs(tokens: list[str]) -> list[tuple[str, str, str]]:
    """(content word before, directional word, content word after) around each directional word."""
    out = []
    for i, t in enumerate(tokens):
        if t in DIRECTIONAL:
            before = next((stem(w) for w in reversed(tokens[max(0, i - 3): i]) if w not in STOP), None)
            after = next((stem(w) for w in tokens[i + 1: i + 4] if w not in STOP), None)
            if before and after:
                out.append((before, t, after))
    return out


def block_swap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """b is a, word for word, with two blocks exchanged around a middle that is not a symmetric "and" / "or":
    a = P X M Y S and b = P Y M X S."""
    if a == b or sorted(a) != sorted(b) or len(a) > MAX_SWAP_WORDS:
        return False
    head = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    tail = next(i for i, (x, y) in enumerate(zip(reversed(a), reversed(b))) if x != y)
    mid_a, mid_b = a[head: len(a) - tail], b[head: len(b) - tail]
    n = len(mid_a)
    for x in range(1, n - 1):
        for y in range(1, n - x):
            middle = mid_a[x: n - y]
            if mid_b == mid_a[n - y:] + middle + mid_a[:x] and not SYMMETRIC & set(middle):
                return True
    return False
