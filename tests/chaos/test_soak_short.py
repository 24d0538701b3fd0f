"""The soak drill, shortened for CI: a real gateway process under a steady rate keeps its memory
within what its cache bounds allow, and its caches within their bounds. The full 10-minute run is
`cachegate soak` (default --duration 600)."""
from __future__ import annotations

import pytest

from loadtests.chaos.soak import soak

pytestmark = pytest.mark.slow


def test_short_soak_stays_within_its_bounds():
    result = soak(duration_s=25, rate=40, unique_share=0.6, exact_bytes=24 * 1024, semantic_entries=60,
                  semantic_bytes=256 * 1024)
    assert result.verdict == "pass", result.reasons
    assert result.requests >= 100 and result.errors == 0
    assert result.store_entries_max["semantic"] == 60, "the run must fill the semantic tier to its bound"
    assert 0 < result.store_bytes_max["exact"] <= 24 * 1024
