"""The readable report of a run, with the workload's reference figures beside the measured ones."""
from __future__ import annotations

from typing import Any


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def trio(p: dict[str, float | None]) -> str:
    return "/".join(ms(p[k]) for k in ("p50", "p95", "p99"))


def headline(r: dict[str, Any]) -> list[tuple[str, str, str]]:
    ref = r.get("reference") or {}
    rows = [("requests", f"{r['requests']} ({r['errors']} errors, {r['unfinished']} unfinished)", ""),
            ("wall time, throughput", f"{r['wall_s']:.1f} s, {r['throughput_rps']:.2f} req/s", ""),
            ("hit rate", pct(r["hit_rate"]), pct(ref.get("hit_rate")) if ref.get("hit_rate") else ""),
            ("  exact", pct(r["exact_hit_rate"]), pct(ref["exact_hit_rate"]) if "exact_hit_rate" in ref else ""),
            ("  curated", pct(r.get("curated_hit_rate", 0.0)), ""),
            ("  semantic", pct(r["semantic_hit_rate"]),
             pct(ref["semantic_hit_rate"]) if "semantic_hit_rate" in ref else ""),
            ("joined a call in flight", pct(r.get("joined_rate", 0.0)), ""),
            ("the stream allowed at most", (f"exact {pct(r['ceiling']['exact_hit_rate'])}, "
                                            f"any tier {pct(r['ceiling']['hit_rate'])}"), ""),
            ("false hits / all hits", (f"{r['false_hits']} ({pct(r['false_hit_rate'])}), "
                                       f"unverified {r['unverified_hits']}"), ""),
            ("latency p50/p95/p99 ms", f"{ms(r['p50_ms'])}/{ms(r['p95_ms'])}/{ms(r['p99_ms'])}",
             f"p99 < {ref['p99_ms_below']}" if "p99_ms_below" in ref else ""),
            ("TTFT p50/p95/p99 ms", f"{ms(r['ttft_p50_ms'])}/{ms(r['ttft_p95_ms'])}/{ms(r['ttft_p99_ms'])}", ""),
            ("tokens saved", f"{r['tokens_saved']} ({r['savings_source']})", ""),
            ("cost saved", f"{r['cost_saved']:.6f}", ""),
            ("effective tokens/s", f"{r['effective_tokens_per_s']:.1f}", "")]
    if r.get("budget_ms") is not None:
        rows.append((f"within {r['budget_ms']:.0f} ms budget", pct(r["within_budget"]), ""))
    if r["errors_by_kind"]:
        rows.append(("errors by kind", ", ".join(f"{k} {n}" for k, n in r["errors_by_kind"].items()), ""))
    return rows


def outcome_rows(r: dict[str, Any]) -> list[str]:
    lines = [f"{'outcome':<13} {'count':>6} {'req/s':>7}  {'latency p50/p95/p99':>20}  {'TTFT p50/p95/p99':>18}"]
    for name, o in r["outcomes"].items():
        if o["count"]:
            lines.append(f"{name:<13} {o['count']:>6} {o['throughput_rps']:>7.2f}  {trio(o['latency_ms']):>20}  "
                         f"{trio(o['ttft_ms']):>18}")
    return lines


def render(r: dict[str, Any]) -> str:
    ref = r.get("reference") or {}
    mode = f"open loop {r['rate']}/s" if r.get("rate") else f"{r['users']} closed-loop users"
    title = f"cachegate loadtest: {r['workload']} ({mode}, {r['duration_s']:.0f} s) against {r['url']}"
    rows = headline(r)
    width = max(len(k) for k, _, _ in rows)
    value_width = max(len(v) for _, v, _ in rows)
    ref_title = f"reference: {ref['source']}" if ref.get("source") else "reference"
    lines = [title, "-" * len(title), f"{'':<{width}}  {'this run':<{value_width}}  {ref_title}"]
    lines += [f"{k:<{width}}  {v:<{value_width}}  {x}".rstrip() for k, v, x in rows]
    return "\n".join(lines + [""] + outcome_rows(r) + [f"\nfiles: {', '.join(r.get('files', []))}"])
