"""The GPU check script's plumbing, in its CPU dry run: every step reports, the kernels agree with
SDPA on toy shapes, and the JSON holds a row per layout and kernel."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("triton")

from loadtests import gpu_check


def test_dry_run_reports_every_step(device, tmp_path, capsys):
    if device.type == "cuda":
        pytest.skip("the dry run is the CPU stand-in; on CUDA gpu_check runs for real")
    assert gpu_check.main(["--dry-run", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["ok"] and report["dry_run"] and report["kernel_tests"]["ok"]
    rows = report["kernels"]["rows"]
    assert {(r["kind"], r["layout"]) for r in rows} == {
        (kind, layout) for kind in ("extend", "decode") for layout in ("smollm2-like", "7b-like")}
    assert all(r["ok"] and r["ours_ms"] > 0 and r["sdpa_ms"] > 0 for r in rows)
    assert report["engine_bench"]["ran"] is False and report["engine_bench"]["note"]
    printed = capsys.readouterr().out
    assert "speedup" in printed and json.loads(printed.strip().splitlines()[-1]) == report
