"""Stop strings over streamed text: cut at the first stop string, and hold back any tail that could
still become one, so the stream never shows a stop string or anything after it.
"""
from __future__ import annotations


class StopChecker:
    def __init__(self, stops: list[str]) -> None:
        self.stops = [s for s in stops if s]
        self.longest = max((len(s) for s in self.stops), default=0)
        self.text = ""        # all text seen so far
        self.emitted = 0      # chars of `text` already released
        self.stopped = False

    def first_stop(self, search_from: int) -> int | None:
        hits = [i for s in self.stops if (i := self.text.find(s, max(0, search_from - len(s) + 1))) >= 0]
        return min(hits, default=None)

    def held_back(self) -> int:
        """Length of the longest tail of `text` that is a proper prefix of some stop string."""
        for n in range(min(self.longest - 1, len(self.text) - self.emitted), 0, -1):
            tail = self.text[-n:]
            if any(s.startswith(tail) for s in self.stops):
                return n
        return 0

    def feed(self, delta: str) -> str:
        """Add new text; return what may be shown now (nothing more once stopped)."""
        if self.stopped:
            return ""
        old_len = len(self.text)
        self.text += delta
        if (cut := self.first_stop(old_len)) is not None:
            self.stopped = True
            return self.release(cut)
        return self.release(len(self.text) - self.held_back())

    def release(self, upto: int) -> str:
        assert upto >= self.emitted, "held-back text only ever grows into a stop or gets released"
        out, self.emitted = self.text[self.emitted:upto], upto
        return out

    def flush(self) -> str:
        """The request ended for another reason: held-back text was not a stop after all."""
        return "" if self.stopped else self.release(len(self.text))
