"""`cachegate bench gateway`: what a cache hit costs next to a request that does nothing.

Starts a bare FastAPI echo app and the gateway (its model an upstream pointing at the echo app, the
semantic tier filled with `--fill` entries) as two processes on loopback, warms the caches, then drives
both with the same closed-loop load (wrk when installed, else a built-in asyncio client): the echo, an
exact hit, a streamed exact hit, and (one connection, for latency) semantic hits on paraphrases that are
embedded anew each time. Prints JSON and a table, draws a PNG.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

from loadtests.http_load import chat_body, drive, free_port

QUESTIONS = ["What are your opening hours?", "How do I return an item I bought online?",
             "Do you ship to Canada?", "How can I reset my account password?"]
PARAPHRASES = ["What are your opening times?", "How do I send back an item I bought online?",
               "Do you deliver to Canada?", "How do I reset my account password?"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--duration-s", type=float, default=10.0, help="per measured path")
    p.add_argument("--connections", type=int, default=16)
    p.add_argument("--fill", type=int, default=10_000, help="semantic entries the gateway holds")
    p.add_argument("--driver", default="auto", choices=["auto", "wrk", "asyncio"],
                   help="load generator: wrk when installed (auto), or the built-in asyncio client")
    p.add_argument("--precision", default="auto", choices=["auto", "float32", "bfloat16"],
                   help="the gateway embedder's precision (auto: as `make serve` picks it on this host)")
    p.add_argument("--quick", action="store_true", help="2 s per path and 1,000 entries (a smoke run)")
    p.add_argument("--out", default="bench-gateway", help="folder for the JSON and the PNG")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the table")


def run(args: argparse.Namespace) -> int:
    if args.quick:
        args.duration_s, args.fill = 2.0, min(args.fill, 1000)
    with ExitStack() as stack:
        echo = stack.enter_context(server("echo"))
        gateway = stack.enter_context(server("gateway", "--upstream", f"http://127.0.0.1:{echo}/v1",
                                             "--fill", str(args.fill), "--precision", args.precision))
        semantic = warm(gateway)
        load = {"connections": args.connections, "duration_s": args.duration_s, "driver": args.driver}
        paths = {"echo": measure(echo, [chat_body(QUESTIONS[0])], **load),
                 "exact_hit": measure(gateway, [chat_body(QUESTIONS[0])], **load),
                 "exact_hit_stream": measure(gateway, [chat_body(QUESTIONS[0], stream=True)], **load)}
        if semantic["served"]:      # only paraphrases the tier serves (a miss would be stored, then exact)
            paths["semantic_hit"] = measure(gateway, [chat_body(p) for p in semantic["served"]],
                                            **load | {"connections": 1})
    result = report(paths, semantic, args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_gateway.json").write_text(json.dumps(result, indent=1))
    plot(result, out / "bench_gateway.png")
    print(json.dumps(result) if args.json else table(result, out))
    return 0


@contextmanager
def server(role: str, *extra: str):
    port = free_port()
    env = os.environ | {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.Popen([sys.executable, "-m", "loadtests.bench_gateway_server", role, "--port", str(port),
                             *extra], stdout=subprocess.PIPE, text=True, env=env)
    try:
        if proc.stdout.readline().strip() != "READY":
            raise RuntimeError(f"the {role} server did not start")
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def warm(port: int) -> dict:
    """Store the questions (misses), then ask each paraphrase once: which ones the semantic tier serves."""
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    with httpx.Client(timeout=60) as client:
        for q in QUESTIONS:
            assert client.post(url, content=chat_body(q), headers=JSON).status_code == 200
        outcomes = [client.post(url, content=chat_body(p), headers=JSON).headers["x-cachegate-cache"]
                    for p in PARAPHRASES]
    served = [p for p, o in zip(PARAPHRASES, outcomes) if o == "hit-semantic"]
    return {"paraphrases": len(PARAPHRASES), "served_by_semantic_tier": len(served), "served": served,
            "outcomes": outcomes}


JSON = {"content-type": "application/json"}


def measure(port: int, bodies: list[bytes], connections: int, duration_s: float, driver: str) -> dict:
    return drive(port, "/v1/chat/completions", bodies, connections, duration_s, driver).as_dict()


def report(paths: dict, semantic: dict, args: argparse.Namespace) -> dict:
    echo, exact = paths["echo"], paths["exact_hit"]
    return {"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
            "connections": args.connections, "duration_s": args.duration_s, "semantic_entries": args.fill,
            "precision": args.precision,
            "paths": paths, "semantic_warm": semantic,
            "exact_hit_rps": exact["rps"], "echo_rps": echo["rps"], "ratio": round(exact["rps"] / echo["rps"], 3),
            "exact_hit_p50_over_echo_p50": round(exact["p50_ms"] / echo["p50_ms"], 3),
            "semantic_hit_p50_ms": paths["semantic_hit"]["p50_ms"] if "semantic_hit" in paths else None,
            "targets": {"ratio": ">= 0.8", "exact_hit_p50_over_echo_p50": "<= 1.3",
                        "semantic_hit_p50_ms": f"<= 20 at {args.fill} entries"}}


def table(r: dict, out: Path) -> str:
    lines = [(f"gateway hit path vs a bare FastAPI echo ({r['cpus']} CPUs, load average {r['load_average']}, "
              f"{r['connections']} connections, {r['duration_s']:g} s per path, driver "
              f"{r['paths']['echo']['driver']}, embedder precision {r.get('precision', 'auto')})"),
             f"{'path':<20}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}"]
    for name, p in r["paths"].items():
        lines.append(f"{name:<20}{p['rps']:>10}{p['p50_ms']:>10}{p['p99_ms']:>10}{p['errors']:>8}")
    lines += [f"ratio (exact hit / echo req/s): {r['ratio']}  target >= 0.8",
              f"exact hit p50 / echo p50: {r['exact_hit_p50_over_echo_p50']}  target <= 1.3",
              (f"semantic hit p50: {r['semantic_hit_p50_ms']} ms at {r['semantic_entries']} entries, one connection"
               f" (paraphrases served by the semantic tier: {r['semantic_warm']['served_by_semantic_tier']}/"
               f"{r['semantic_warm']['paraphrases']})  target <= 20 ms"),
              f"wrote {out / 'bench_gateway.json'} and {out / 'bench_gateway.png'}"]
    return "\n".join(lines)


def plot(r: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(r["paths"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    left.bar(names, [r["paths"][n]["rps"] for n in names], color=["#888", "#4fb3ff", "#4fb3ff", "#b58cff"])
    left.set_title("requests/s (higher is better)")
    right.bar(names, [r["paths"][n]["p50_ms"] for n in names], color=["#888", "#4fb3ff", "#4fb3ff", "#b58cff"])
    right.set_title("p50 latency, ms (semantic: one connection)")
    for ax in (left, right):
        ax.tick_params(axis="x", rotation=20)
    fig.suptitle(f"cache hits vs a bare echo: ratio {r['ratio']}, p50 x{r['exact_hit_p50_over_echo_p50']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
