"""`cachegate stats [--url URL] [--token T]`: the dashboard's summary as a table in the terminal."""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", default="http://127.0.0.1:8000", help="the gateway (default http://127.0.0.1:8000)")
    p.add_argument("--token", default=os.environ.get("CACHEGATE_ADMIN_TOKEN"),
                   help="admin token (default: $CACHEGATE_ADMIN_TOKEN)")
    p.add_argument("--json", action="store_true", help="print the raw figures as JSON")


def run(args: argparse.Namespace) -> int:
    try:
        stats = fetch(args.url, args.token)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        print(f"cachegate stats: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(stats) if args.json else render(stats))
    return 0


def fetch(url: str, token: str | None) -> dict[str, Any]:
    request = urllib.request.Request(url.rstrip("/") + "/admin/api/stats",
                                     headers={"authorization": f"Bearer {token or ''}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
    except urllib.error.HTTPError as exc:
        message = json.loads(exc.read() or b"{}").get("error", {}).get("message", exc.reason)
        raise ValueError(f"{exc.code}: {message}") from None


def render(stats: dict[str, Any]) -> str:
    t = stats["totals"]
    rows = [("requests (last hour)", f"{t['requests']}"),
            ("hit rate", f"{t['hit_rate']:.1%}  (exact {t['exact_hit_rate']:.1%}, curated {t['curated_hit_rate']:.1%}, "
                         f"semantic {t['semantic_hit_rate']:.1%})"),
            ("outcomes", ", ".join(f"{k} {v}" for k, v in t["by_cache"].items())),
            ("tokens saved / served", f"{t['tokens_saved']} / {t['tokens_served']}"),
            ("cost saved / spent", f"{t['cost_saved']:.4f} / {t['cost']:.4f}"),
            ("saved by routing small", f"{t.get('routing_cost_saved', 0.0):.4f}"),
            ("routes", ", ".join(f"{k} {v}" for k, v in t["routes"].items() if k != "-") or "-")]
    for group in ("hit", "miss"):
        lat = t["latency_ms"][group]
        rows.append((f"{group} latency ms p50/p95/p99", "/".join(_ms(lat[f"p{q}"]) for q in (50, 95, 99))
                     + f"  (n={lat['count']})"))
    for name, s in stats["stores"].items():
        rows.append((f"store {name}", f"{'up' if s['up'] else 'DOWN'}, {s['entries']} entries, {s['bytes']} bytes"))
    for name, v in (stats.get("verification") or {}).get("namespaces", {}).items():
        setting = next((f"{k} {v[k]}" for k in ("threshold", "target_false_hit_rate") if k in v), "")
        rows.append((f"false hits {name}", f"{v['false_hit_rate']:.1%}, upper bound {v['upper_bound']:.1%} "
                     f"(target {v['target']:.1%}, {v['checked_since_change']} checked); {setting}"))
    for b in stats["backends"]:
        engine = b.get("engine") or {}
        extra = f", running {engine.get('running')}, waiting {engine.get('waiting')}" if engine else ""
        rows.append((f"{b['replica']}", f"circuit {b['breaker']}, in flight {b['outstanding']}{extra}"))
    width = max(len(k) for k, _ in rows)
    title = f"cachegate stats ({stats.get('scope', 'replica')})"
    return "\n".join([title, "-" * len(title)] + [f"{k:<{width}}  {v}" for k, v in rows])


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
