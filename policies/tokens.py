"""Tokens of a question for the similarity signals: words with contractions expanded, content words,
crude stems, numbers and named things (capitalised words, acronyms).

Pure functions shared by `policies.signals` (soft signals) and `policies.differences` (vetoes).
"""
from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+(?:'[^\W\d_]+)?")   # letters of any script, digits; "what's" kept whole
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NAME = re.compile(r"\b(?:[A-Z][a-zA-Z0-9]+|[A-Z]{2,}[a-z]?)\b")
_NUMBER_WORDS = ["zero", "_", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
_ORDINAL_DIGITS = re.compile(r"\d+(?:st|nd|rd|th)")
_ORDINAL_SUFFIX = re.compile(r"(?:st|nd|rd|th)\b")
_SENTENCE = re.compile(r"(?<=[.?!])\s+")
_IRREGULAR = {"can't": ["can", "not"], "cannot": ["can", "not"], "won't": ["will", "not"],
              "shan't": ["shall", "not"], "let's": ["let", "us"]}
_IS = frozenset(["what", "that", "it", "he", "she", "there", "here", "who", "where", "how", "when", "why"])   # "what's": is, not possessive
_SUFFIXES = {"n't": "not", "'re": "are", "'m": "am", "'ve": "have", "'ll": "will", "'d": "would"}
QUESTION_WORDS = frozenset({"what", "why", "how", "when", "where", "who", "whom", "whose", "which",
                            "can", "could", "should", "would", "is", "are", "do", "does", "did", "will"})
_PERSON = {**dict.fromkeys(("i", "me", "my", "mine", "myself"), "1"), **dict.fromkeys(("we", "us", "our"), "1p"),
           **dict.fromkeys(("you", "your", "yours", "yourself"), "2"),
           **dict.fromkeys(("he", "she", "him", "her", "his", "they", "them", "their"), "3")}
_PAST = frozenset({"did", "was", "were", "had"})
FRAMING = frozenset(["step", "steps", "way", "ways", "possible", "want", "need"])
STOP = frozenset(["a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "was", "were", "be", "been", "do", "does", "did", "i", "you", "we", "it", "my", "your", "me", "what", "how", "why", "when", "where", "who", "which", "that", "this", "these", "those", "with", "at", "by", "from", "as", "can", "could", "should", "would", "will", "some", "any", "there", "their", "its", "about", "into", "if", "so", "am", "have", "has", "had", "not"])
# adverbs that only colour what comes next: a negation or a request reaches past them to the word that carries
# meaning ("I do not really need it" -> "need", "can I still eat it" -> "eat")
FILLER_ADVERBS = frozenset({"really", "actually", "even", "just", "still", "ever"})


def words(text: str) -> list[str]:
    """Lower-cased words, contractions expanded ("what's" -> "what is", "don't" -> "do not")."""
    out: list[str] = []
    for token in _WORD.findall(text.lower().replace("\u2019", "'")):
        out += expand(token)
    return out


def expand(token: str) -> list[str]:
    if "'" not in token:                 # most words: only "cannot" expands without an apostrophe
        return _IRREGULAR.get(token) or [token]
    if token in _IRREGULAR:
        return _IRREGULAR[token]
    if token.endswith("'s"):
        return [token[:-2], "is"] if token[:-2] in _IS else [token[:-2]]
    for suffix, word in _SUFFIXES.items():
        if token.endswith(suffix) and len(token) > len(suffix):
            return [token[: -len(suffix)], word]
    return [token]


def content(tokens: list[str]) -> set[str]:
    return {stem(t) for t in tokens if t not in STOP}


def stem(token: str) -> str:
    """A crude plural/suffix fold so 'books' and 'book' count as one word."""
    for suffix in ("ing", "es", "s"):
        if len(token) > len(suffix) + 3 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token


def numbers(text: str) -> set[str]:
    """Numbers written in digits or words ("2" and "two" are the same; not "one", as often a pronoun as a
    count); ordinals ("first", "1st") apart."""
    found = {n for n in _NUMBER.findall(text) if not _ORDINAL_SUFFIX.match(text, text.find(n) + len(n))}
    for token in words(text):
        if token in _NUMBER_WORDS:
            found.add(str(_NUMBER_WORDS.index(token)))
        elif token in _ORDINALS or _ORDINAL_DIGITS.fullmatch(token):
            found.add("#" + str(_ORDINALS.index(token) + 1 if token in _ORDINALS else int(token[:-2])))
    return found


def names(text: str) -> set[str]:
    """Capitalised words and acronyms, lower-cased; a sentence's first word counts only as an acronym."""
    found: set[str] = set()
    for sentence in _SENTENCE.split(text):
        first = re.match(r"\s*\w+", sentence)
        start = first.end() if first and not first.group().strip().isupper() else 0
        found |= {n.lower() for n in _NAME.findall(sentence[start:])}
    return found


def content_sequence(tokens: list[str]) -> list[str]:
    """Content words in order, stemmed: what is left of a question once its function words and its framing
    ("what are the steps to", "is it possible to", "I want to") are gone."""
    return [stem(t) for t in tokens if t not in STOP and t not in FRAMING]


def person(tokens: list[str]) -> set[str]:
    """Who the question is about: first, second, third person ("how did you ..." vs "how do I ...")."""
    return {_PERSON[t] for t in tokens if t in _PERSON}


def question_word(tokens: list[str]) -> str:
    return next((t for t in tokens[:3] if t in QUESTION_WORDS), "")


def past(tokens: list[str]) -> bool:
    return bool(_PAST & set(tokens))
