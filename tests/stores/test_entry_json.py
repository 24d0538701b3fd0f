"""Stored JSON is read with a bound on nesting: a document nested past `MAX_ENTRY_DEPTH` is a corrupt entry
however it nests, and one with fewer brackets than that skips the depth walk without being let through wrongly."""
from __future__ import annotations

import json

import pytest

from cachegate.cache.answer import MAX_ENTRY_DEPTH, CorruptEntry, load_json, opening_brackets
from cachegate.json_depth import depth


def nested(levels: int) -> bytes:
    return ('{"a": ' * levels + "1" + "}" * levels).encode()


@pytest.mark.parametrize("levels", [1, MAX_ENTRY_DEPTH, MAX_ENTRY_DEPTH + 1, 200])
def test_nesting_past_the_limit_is_refused_and_up_to_it_read(levels):
    if levels > MAX_ENTRY_DEPTH:
        with pytest.raises(CorruptEntry, match="nested too deeply"):
            load_json(nested(levels))
    else:
        assert load_json(nested(levels)) == json.loads(nested(levels))


def test_brackets_bound_the_depth_from_above():
    text = json.dumps({"text": "a [bracket] in {text}", "pieces": [1, 2], "tool_calls": [{"f": {"x": [3]}}]})
    assert opening_brackets(text) == opening_brackets(text.encode()) == 8
    assert depth(json.loads(text), 100) == 5            # dict, list, dict, dict, list
    for levels in range(1, 40):
        assert depth(json.loads(nested(levels)), 100) == opening_brackets(nested(levels)) == levels
