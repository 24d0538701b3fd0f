"""`cachegate loadtest --workload NAME --rate R --duration S --url URL [--json]`: plays a workload against
a gateway on loopback (open-loop Poisson arrivals, or `--users N` closed-loop), then prints the report
(one JSON line with `--json`, else a table beside the reference figures) and writes JSON + PNG plots."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from loadtests.workloads import NAMES


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workload", required=True, choices=NAMES)
    p.add_argument("--url", default="http://127.0.0.1:8000", help="the gateway; loopback addresses only")
    arrivals = p.add_mutually_exclusive_group()
    arrivals.add_argument("--rate", type=float, help="open loop: sessions started per second (Poisson; default 1)")
    arrivals.add_argument("--users", type=int, help="closed loop: this many concurrent users instead")
    p.add_argument("--duration", type=float, default=60.0, help="seconds during which requests start")
    p.add_argument("--max-requests", type=int, default=None, help="stop starting requests after this many")
    p.add_argument("--model", default="auto", help="the model field sent (default auto)")
    p.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY"), help="sent as a bearer token")
    p.add_argument("--stream", action=argparse.BooleanOptionalAction, default=True,
                   help="stream answers so time to first token is measured (default on)")
    p.add_argument("--seed", type=int, default=0, help="the workload's and the arrivals' seed")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds one request may take")
    p.add_argument("--drain", type=float, default=60.0, help="seconds to wait for in-flight requests at the end")
    p.add_argument("--admin-token", default=os.environ.get("CACHEGATE_ADMIN_TOKEN"),
                   help="read tokens and cost saved from the gateway's /admin/api/stats (default: estimated)")
    p.add_argument("--curated", help="import this curated library (JSONL or CSV, e.g. loadtests/libraries/"
                                     "customer-service.jsonl) through the admin API first (needs --admin-token)")
    p.add_argument("--price-in-per-1k", type=float, default=0.0, help="for the cost estimate without a token")
    p.add_argument("--price-out-per-1k", type=float, default=0.0)
    p.add_argument("--out", default="loadtest-out", help="folder for the JSON report and the PNG plots")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the table")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(args: argparse.Namespace) -> int:
    from loadtests.loadgen.guard import loopback_base
    try:
        base = loopback_base(args.url)
    except ValueError as exc:
        print(f"cachegate loadtest: {exc}", file=sys.stderr)
        return 2
    if (args.rate is not None and args.rate <= 0) or (args.users is not None and args.users <= 0):
        print("cachegate loadtest: --rate and --users must be positive", file=sys.stderr)
        return 2
    if args.curated:
        import_library(base, args.admin_token, args.curated)
    report = measure(args, base)
    print(json.dumps(report) if args.json else render_table(report))
    return 0


def measure(args: argparse.Namespace, base: str) -> dict[str, Any]:
    from loadtests.loadgen.metrics import summarize, timeline
    from loadtests.loadgen.runner import Plan, play
    from loadtests.workloads import build
    workload = build(args.workload, args.seed)
    plan = Plan(base, args.model, args.stream, args.api_key, None if args.users else (args.rate or 1.0),
                args.users, args.duration, args.max_requests, args.timeout, args.drain, args.seed,
                not args.no_progress)
    before = gateway_totals(base, args.admin_token)
    run_ = play(workload, plan)
    report = {"workload": workload.name, "url": base, "rate": plan.rate, "users": plan.users,
              "duration_s": args.duration, "seed": args.seed, "stream": args.stream, "model": args.model,
              **summarize(run_.results, run_.wall_s, workload.budget_ms, args.price_in_per_1k,
                          args.price_out_per_1k),
              "unfinished": run_.unfinished, "sessions": run_.sessions,
              "multi_turn_sessions": run_.multi_turn_sessions, "reference": workload.reference}
    counted = gateway_savings(base, args.admin_token, before)
    if counted:
        report |= {"tokens_saved_estimate": report["tokens_saved"], "cost_saved_estimate": report["cost_saved"]}
        report |= counted
    report["files"] = write(report, run_, timeline(run_.results, run_.wall_s), Path(args.out))
    return report


def import_library(base: str, token: str | None, path: str) -> None:
    import httpx

    from cachegate.cache.curated.records import read_file
    records = [a.model_dump(exclude={"updated"}) for a in read_file(path)]
    r = httpx.post(base + "/admin/api/answers", json={"answers": records}, timeout=600,
                   headers={"authorization": f"Bearer {token or ''}"})
    if r.status_code != 200:
        raise SystemExit(f"cachegate loadtest: importing {path} failed: {r.status_code} {r.text}")
    print(f"cachegate loadtest: curated library {path}: {r.json()}", file=sys.stderr)


def gateway_totals(base: str, token: str | None) -> dict[str, Any] | None:
    if not token:
        return None
    from cachegate.commands.stats import fetch
    try:
        return fetch(base, token)["totals"]
    except (OSError, ValueError, KeyError) as exc:     # the estimate from usage stands in
        print(f"cachegate loadtest: gateway stats unavailable ({exc}); savings are estimated", file=sys.stderr)
        return None


def gateway_savings(base: str, token: str | None, before: dict[str, Any] | None) -> dict[str, Any]:
    """Tokens and cost saved during the run, as the gateway counted them (its figures are per minute
    and, with Redis, flushed every few seconds, so wait for one flush)."""
    if before is None:
        return {}
    time.sleep(2.5)
    after = gateway_totals(base, token)
    if after is None:
        return {}
    return {"tokens_saved": after["tokens_saved"] - before["tokens_saved"],
            "cost_saved": round(after["cost_saved"] - before["cost_saved"], 6), "savings_source": "gateway"}


def write(report: dict[str, Any], run_, rows: list[dict[str, Any]], out: Path) -> list[str]:
    from dataclasses import asdict

    from loadtests.loadgen.plots import draw
    out.mkdir(parents=True, exist_ok=True)
    stem = report["workload"]
    files = draw(run_.results, rows, stem, out, stem)
    with (out / f"{stem}-results.jsonl").open("w") as f:
        for r in run_.results:
            f.write(json.dumps(asdict(r)) + "\n")
    files += [str(out / f"{stem}-results.jsonl"), str(out / f"{stem}.json")]
    (out / f"{stem}.json").write_text(json.dumps(report | {"files": files, "timeline": rows}, indent=1))
    return files


def render_table(report: dict[str, Any]) -> str:
    from loadtests.loadgen.table import render
    return render(report)
