"""`cachegate bench semantic` end to end on a small tier: the real embedder and matcher, its JSON and plot."""
from __future__ import annotations

import json

from cachegate.commands.main import main


def test_bench_semantic_times_lookups_and_throughput_and_writes_its_files(tmp_path, capsys):
    rc = main(["bench", "semantic", "--sizes", "200", "--throughput-at", "200", "--probes", "5",
               "--duration-s", "0.5", "--warm-up-s", "0.2", "--no-layouts", "--json", "--out", str(tmp_path)])
    assert rc == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    written = json.loads((tmp_path / "bench_semantic.json").read_text())
    assert printed == written and (tmp_path / "bench_semantic.png").stat().st_size > 0
    size = written["sizes"]["200"]
    assert size["entries"] == 200 and size["index"] == "flat" and size["lookups"] == 5
    assert 0 < size["lookup_ms"]["p50"] and size["embed_ms"]["p50"] <= size["lookup_ms"]["p99"]
    batched, single = written["throughput"]["micro_batching"], written["throughput"]["one_at_a_time"]
    assert batched["lookups_per_s"] > 0 and single["lookups_per_s"] > 0
    assert single["mean_batch"] == 1.0 and batched["mean_batch"] > 1.0      # concurrent lookups share encodes
    assert batched["hit_share"] > 0 and single["hit_share"] > 0      # timed lookups reach the decision: some served
