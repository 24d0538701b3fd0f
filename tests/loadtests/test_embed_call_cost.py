"""`python -m loadtests.embed_call_cost` times the real embedder on every shape and fits a call's fixed cost and a
padded token's; a wider batch of longer texts costs more than one short text."""
from __future__ import annotations

import json

from loadtests.embed_call_cost import SHAPES, main


def test_embed_call_cost_times_each_shape_and_fits_a_per_token_cost(capsys):
    assert main(["--precisions", "float32", "--seconds", "0.01"]) == 0
    fit = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["float32"]
    shapes = {(n, length): ms for n, length, ms in fit["shapes"]}
    assert sorted(shapes) == sorted(SHAPES)
    assert shapes[32, 64] > shapes[1, 8] > 0
    assert fit["per_token_ms"] > 0 and abs(fit["call_tokens"] - fit["per_call_ms"] / fit["per_token_ms"]) <= 1
