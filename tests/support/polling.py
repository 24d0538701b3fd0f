"""Waiting for something that happens in the background (a replica following, a probe recovering)."""
from __future__ import annotations

import time


def until(condition, timeout_s: float = 10.0, every_s: float = 0.05) -> bool:
    """True as soon as `condition()` is, False once `timeout_s` has passed without it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every_s)
    return False
