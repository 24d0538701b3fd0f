"""`cachegate loadtest ... --json` against a live stand-in gateway: one JSON line with the promised keys,
counts that add up, the bounds honoured, the report and plots written. No timing is asserted."""
from __future__ import annotations

import json

import pytest

from cachegate.api.app import create_app
from cachegate.commands.main import main
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend
from tests.support.live_server import LiveServer

KEYS = ("requests", "errors", "hit_rate", "exact_hit_rate", "semantic_hit_rate", "false_hit_rate", "p50_ms",
        "p99_ms", "tokens_saved")
TOKEN = "loadtest-admin-token"


def stand_in(backend):
    settings = make_settings(cache={"semantic": {"enabled": False}}, admin={"token": TOKEN})
    return LiveServer(create_app(settings, backends={"echo": backend}))


@pytest.fixture(scope="module")
def gateway():
    with stand_in(EchoBackend()) as live:
        yield live


def loadtest(capsys, *args):
    assert main(["loadtest", "--model", "echo", "--no-progress", "--json", *args]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def test_a_short_open_loop_run_reports_counts_that_add_up(capsys, tmp_path):
    backend = EchoBackend()
    with stand_in(backend) as fresh:           # every cached answer comes from this run's own misses
        r = loadtest(capsys, "--workload", "customer-service", "--url", fresh.url, "--rate", "15",
                     "--duration", "2", "--out", str(tmp_path))
    assert all(key in r for key in KEYS)
    assert r["requests"] > 0 and r["errors"] == 0 and r["unfinished"] == 0
    assert sum(r["by_outcome"].values()) + r["errors"] == r["requests"]
    assert sum(o["count"] for o in r["outcomes"].values()) == r["answered"]
    assert r["hit_rate"] == pytest.approx(r["exact_hit_rate"] + r["semantic_hit_rate"], abs=1e-3)
    assert backend.calls <= r["by_outcome"]["miss"] + r["by_outcome"]["bypass"]
    assert r["false_hits"] == 0 and r["unverified_hits"] == 0
    assert r["sessions"] >= r["multi_turn_sessions"] and r["follow_ups"] <= r["requests"]
    assert r["reference"]["exact_hit_rate"] == 0.38
    for name in ("customer-service.json", "customer-service-latency-cdf.png", "customer-service-hit-rate.png",
                 "customer-service-throughput.png", "customer-service-results.jsonl"):
        assert (tmp_path / name).stat().st_size > 0
    saved = json.loads((tmp_path / "customer-service.json").read_text())
    assert saved["requests"] == r["requests"] and saved["files"] == r["files"]
    assert sum(row["answered"] for row in saved["timeline"]) == r["answered"]


def test_max_requests_stops_the_run_by_itself(gateway, capsys, tmp_path):
    r = loadtest(capsys, "--workload", "code-completion", "--url", gateway.url, "--rate", "40",
                 "--duration", "600", "--max-requests", "12", "--out", str(tmp_path), "--admin-token", TOKEN)
    assert r["requests"] == 12 and r["errors"] == 0
    assert r["budget_ms"] == 200 and 0 <= r["within_budget"] <= 1
    assert r["savings_source"] == "gateway" and r["tokens_saved"] == r["tokens_saved_estimate"]


def test_closed_loop_users_without_streaming(gateway, capsys, tmp_path):
    r = loadtest(capsys, "--workload", "mixed", "--url", gateway.url + "/v1", "--users", "3",
                 "--duration", "600", "--max-requests", "10", "--no-stream", "--out", str(tmp_path))
    assert r["requests"] == 10 and r["errors"] == 0 and r["users"] == 3
    assert r["ttft_p50_ms"] == r["p50_ms"]          # without a stream the first token is the whole answer


def test_the_table_shows_the_reference_beside_the_run(gateway, capsys, tmp_path):
    assert main(["loadtest", "--model", "echo", "--no-progress", "--workload", "customer-service", "--url",
                 gateway.url, "--rate", "20", "--duration", "1", "--max-requests", "8", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "reference: a bank's three-tier cache" in out
    assert "38.0%" in out and "p99 < 800" in out and "false hits" in out


def test_errors_are_counted_by_kind(capsys, tmp_path):
    backend = EchoBackend()
    backend.fail_before = True
    with stand_in(backend) as live:
        r = loadtest(capsys, "--workload", "mixed", "--url", live.url, "--users", "2", "--duration", "600",
                     "--max-requests", "4", "--out", str(tmp_path))
    assert r["requests"] == 4 and r["errors"] == 4 and r["hit_rate"] == 0.0
    assert sum(r["errors_by_kind"].values()) == 4 and all(k.startswith("http_5") for k in r["errors_by_kind"])
