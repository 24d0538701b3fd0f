"""How deeply a parsed JSON value nests, counted without recursion, so a hostile document (a request body,
a stored entry) is refused with a clear error instead of overflowing the stack somewhere later."""
from __future__ import annotations

from typing import Any


def depth(value: Any, limit: int) -> int:
    """Nesting depth of `value` (a scalar is 1); stops counting once it passes `limit`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if level > limit:
            return level
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest
