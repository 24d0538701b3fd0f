"""Whether two English verbs can say the same thing, by WordNet: "step down" and "cancel" cannot, "look up" and
"check" can only through a sense WordNet links. Reads the table `policies.wordnet_build` cuts from WordNet
(`data/wordnet_verbs.json`, 0.5 MB, loaded by `warm()` when the semantic tier is built, or on first use). Pure
Python.
"""
from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path

TABLE = Path(__file__).parent / "data" / "wordnet_verbs.json"
# WordNet's rules for a verb's base form ("morphy"): suffix -> replacement
SUFFIXES = (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""))


@cache
def _table() -> dict:
    return json.loads(TABLE.read_text(encoding="utf-8"))


def warm() -> None:
    """Load the table now (about 0.1 s, 6.5 MB), not in the first lookup that asks."""
    _table()


@lru_cache(maxsize=8192)
def base_form(phrase: str) -> str | None:
    """The lemma WordNet files a verb or verb phrase under ("stepped down" -> "step down"), or None."""
    table = _table()
    phrase = " ".join(phrase.lower().split())
    if phrase in table["lemmas"]:
        return phrase
    head, _, rest = phrase.partition(" ")
    forms = [table["irregular"].get(head)] + [head[: -len(s)] + r for s, r in SUFFIXES if head.endswith(s)]
    for form in forms:
        candidate = f"{form} {rest}".strip() if form else None
        if candidate in table["lemmas"]:
            return candidate
    return None


def known(phrase: str) -> bool:
    return base_form(phrase) is not None


@lru_cache(maxsize=8192)
def _senses(lemma: str) -> frozenset[int]:
    return frozenset(_table()["lemmas"][lemma])


@lru_cache(maxsize=8192)
def _reach(lemma: str) -> frozenset[int]:
    """Its senses and every synset one link away from one of them."""
    links = _table()["links"]
    return _senses(lemma).union(*(links[s] for s in _senses(lemma)))


def related(a: str, b: str) -> bool | None:
    """Some sense of one is a sense of the other or linked to it directly (hypernym, hyponym, verb group,
    entailment, cause, see also); None when WordNet does not know one of them."""
    la, lb = base_form(a), base_form(b)
    if la is None or lb is None:
        return None
    return bool(_reach(la) & _senses(lb)) or bool(_reach(lb) & _senses(la))
