"""The errors of constrained decoding (all `RequestValidationError`s: a 400 at the gateway), and the
cleaning of xgrammar's messages. Light: importing it does not load xgrammar."""
from __future__ import annotations

from engine.errors import RequestValidationError


class GrammarError(RequestValidationError):
    """The schema or tool set cannot be compiled, or uses what the engine cannot enforce."""


def first_line(exc: BaseException) -> str:
    """xgrammar's messages start with a timestamp and a C++ source location: keep what they say."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.split(": ", 1)[1] if text.startswith("[") and ": " in text else text
