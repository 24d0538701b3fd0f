"""`cachegate bench semantic`: the latency a semantic lookup adds (embedding included) and lookups/s.

Fills the tier with N entries (real questions from the dev data, then synthetic vectors near them),
times sequential lookups (p50/p99) and 32 concurrent clients with and without micro-batching, and with the
models as they ran before their frozen traces and split queues (eager, one call per queue), and compares index
layouts (flat vs IVF, one index per scope vs one filtered index). Prints JSON and a table, draws a PNG.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "semantic"
WARM_UP_WORDS = 64   # texts of 1..64 words encoded before timing


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sizes", default="1000,100000,1000000", help="entry counts, comma-separated")
    p.add_argument("--probes", type=int, default=200, help="sequential lookups timed per size")
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--duration-s", type=float, default=6.0, help="per throughput run")
    p.add_argument("--warm-up-s", type=float, default=2.0, help="untimed lookups before each throughput run")
    p.add_argument("--throughput-at", type=int, default=100_000, help="entry count of the throughput runs")
    p.add_argument("--data", default=str(DATA), help="folder with qqp_dev.csv (real questions)")
    p.add_argument("--out", default="bench-semantic", help="folder for the JSON and the PNG")
    p.add_argument("--precision", default="auto", help="embedder precision: auto | float32 | bfloat16")
    p.add_argument("--threads", type=int, default=1, help="torch threads of the embedding worker (0: default)")
    p.add_argument("--policy", default="packaged",
                   help="semantic policy: packaged (the matcher, verification included), cosine, or a file/folder")
    p.add_argument("--embedding-cache", help="memo folder for the stored questions' embeddings (faster fill)")
    p.add_argument("--no-layouts", action="store_true", help="skip the index layout comparison")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the table")


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from loadtests.semantic_fill import questions, use_embedding_memo
    sizes = sorted(int(s) for s in args.sizes.split(","))
    stored, probes = questions(Path(args.data))
    if args.embedding_cache:
        use_embedding_memo(args.embedding_cache, args.precision)
    result: dict = {"cpus": os.cpu_count(), "load_average_start": load_average(), "policy": args.policy,
                    "precision": embedder_precision(args.precision, args.threads),
                    "threads": args.threads, "sizes": {}, "throughput": {}, "layouts": {}}
    steps = tqdm(total=len(sizes) + 3, desc="bench semantic", unit="step")
    for size in sizes:
        result["sizes"][str(size)] = asyncio.run(time_size(size, stored, probes, args))
        steps.update()
    at = args.throughput_at
    for label, batch, eager in (("micro_batching", 64, False), ("one_at_a_time", 1, False),
                                ("eager_one_call", 64, True)):
        result["throughput"][label] = asyncio.run(throughput(at, stored, probes, args, batch, eager))
        steps.update()
    if not args.no_layouts:
        from loadtests.semantic_layouts import compare_layouts
        result["layouts"] = compare_layouts(stored)
    steps.update()
    steps.close()
    result["load_average_end"] = load_average()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_semantic.json").write_text(json.dumps(result, indent=1))
    from loadtests.semantic_plot import plot
    plot(result, out / "bench_semantic.png")
    print(json.dumps(result) if args.json else table(result, out))
    return 0


async def time_size(size: int, stored: list[str], probes: list[str], args: argparse.Namespace) -> dict:
    from loadtests.semantic_fill import fill, make_tier, request
    tier = make_tier(max_batch=64, precision=args.precision, threads=args.threads, policy=args.policy)
    rss_before = rss_mb()
    fill_started = time.perf_counter()
    fill_info = await fill(tier, size, stored)
    fill_s = time.perf_counter() - fill_started
    await tier.lookup("chat", request(probes[0]))             # warm-up, and the encoder sees every
    for n in range(1, WARM_UP_WORDS + 1):                      # question length once (oneDNN builds
        await tier.embedder.embed(["word " * n])               # its kernels per shape)
    eager = eager_twin(tier.embedder)
    embed_ms, eager_ms, total_ms, hits = [], [], [], 0
    for q in probes[1: args.probes + 1]:
        started = time.perf_counter()
        await tier.embedder.embed([q + " "])                  # embedding alone (a text not seen before)
        embed_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        await eager.embed([q + "  "])                          # the same, through the eager pipeline
        eager_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        found = await tier.lookup("chat", request(q))
        total_ms.append((time.perf_counter() - started) * 1000)
        hits += bool(found and found.hit)
    index = next(iter(tier.catalog.scopes.values()))
    out = {"entries": len(tier.catalog), "index": index.kind, "fill_s": round(fill_s, 1), **fill_info,
           "rss_mb_added": round(rss_mb() - rss_before), "lookup_ms": pct(total_ms), "embed_ms": pct(embed_ms),
           "embed_eager_ms": pct(eager_ms),
           "hits": hits, "lookups": len(total_ms), **verification(tier, len(total_ms) + 1)}
    eager.close()
    await tier.close()
    return out


def eager_twin(embedder):
    """An embedder like `embedder` (same loaded model) that runs sentence-transformers' eager pipeline."""
    from cachegate.cache.semantic.embedder import Embedder
    return Embedder(embedder.model_name, max_batch=1, cache_size=0, precision=embedder.precision,
                    threads=embedder.threads, trace=False)


async def throughput(size: int, stored: list[str], probes: list[str], args: argparse.Namespace,
                     max_batch: int, eager: bool = False) -> dict:
    from loadtests.semantic_fill import fill, make_tier, request
    tier = make_tier(max_batch=max_batch, precision=args.precision, threads=args.threads, policy=args.policy)
    if eager:      # the models before their traces, one encode call per queue however long
        tier.embedder.trace, tier.embedder.split_at = False, 10 ** 9
        if tier.verifier is not None:
            from cachegate.cache.semantic.verifier import Verifier
            traced, tier.verifier = tier.verifier, Verifier(tier.verifier.folder, tier.verifier.precision,
                                                            tier.verifier.threads, trace=False)
            traced.close()
    await fill(tier, size, stored)
    done = hits = 0

    # The probes go in as they are: the bench's embedder memoises nothing (cache_size 0). A " #i" suffix
    # once kept them unique, but its number vetoed every candidate, so no timed lookup was served or verified.
    async def client(k: int, deadline: float, first: int) -> None:
        nonlocal done, hits
        i = first + k
        while time.perf_counter() < deadline:
            found = await tier.lookup("chat", request(probes[i % len(probes)]))
            done += 1
            hits += bool(found and found.hit)
            i += args.clients

    async def clients(seconds: float, first: int) -> float:
        started = time.perf_counter()
        await asyncio.gather(*(client(k, started + seconds, first) for k in range(args.clients)))
        return time.perf_counter() - started
    # untimed: the encoder meets each batch shape for the first time here (oneDNN builds kernels per shape)
    await clients(args.warm_up_s, first=10 ** 6)
    done, hits, tier.embedder.batches, tier.embedder.encoded = 0, 0, 0, 0
    if tier.verifier is not None:
        tier.verifier.calls = tier.verifier.pairs = 0
    elapsed = await clients(args.duration_s, first=0)
    out = {"entries": size, "clients": args.clients, "max_batch": max_batch,
           "lookups_per_s": round(done / elapsed, 1), "hit_share": round(hits / max(1, done), 3),
           "encode_calls": tier.embedder.batches,
           "mean_batch": round(tier.embedder.encoded / max(1, tier.embedder.batches), 1),
           **verification(tier, done)}
    await tier.close()
    return out


def verification(tier, lookups: int) -> dict:
    """How much the matcher's verifier did: pairs scored per lookup and per forward call."""
    v = tier.verifier
    if v is None:
        return {}
    return {"verified_pairs_per_lookup": round(v.pairs / max(1, lookups), 2), "verifier_calls": v.calls,
            "pairs_per_verifier_call": round(v.pairs / max(1, v.calls), 1)}


def pct(ms: list[float]) -> dict:
    return {"p50": round(float(np.percentile(ms, 50)), 2), "p99": round(float(np.percentile(ms, 99)), 2),
            "mean": round(float(np.mean(ms)), 2)}


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages: the figures only mean something next to how busy the cores were."""
    return [round(x, 2) for x in os.getloadavg()]


def embedder_precision(precision: str, threads: int) -> str:
    """The precision the embedder runs in; for `auto`, with the timing that chose it where one did."""
    from cachegate.cache.semantic.embedder import PACKAGED, resolve_precision, timing_for
    chosen = resolve_precision(precision, PACKAGED, threads)
    timing = timing_for(PACKAGED, threads) if precision == "auto" else None
    if timing is None:
        return chosen
    return (f"auto: {chosen}, timed 1 / 16 questions {timing.lone_ms['float32']:g} / {timing.batch_ms['float32']:g} ms"
            f" float32, {timing.lone_ms['bfloat16']:g} / {timing.batch_ms['bfloat16']:g} bfloat16")


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def table(r: dict, out: Path) -> str:
    lines = [(f"semantic lookup latency, embedding included, policy {r.get('policy', 'packaged')} "
              f"({r['cpus']} CPUs, embedder {r['precision']},"
              f" {r['threads']} thread(s); load average {r['load_average_start']} -> {r['load_average_end']})"),
             (f"{'entries':>10} {'index':>6} {'p50 ms':>8} {'p99 ms':>8} {'embed p50':>10} {'eager p50':>10}"
              f" {'fill s':>7}"
              f" {'index build s':>14} {'RSS +MB':>8}")]
    for s in r["sizes"].values():
        lines.append(f"{s['entries']:>10} {s['index']:>6} {s['lookup_ms']['p50']:>8} {s['lookup_ms']['p99']:>8}"
                     f" {s['embed_ms']['p50']:>10} {s.get('embed_eager_ms', {}).get('p50', '-'):>10}"
                     f" {s['fill_s']:>7} {s.get('index_build_s', 0):>14}"
                     f" {s['rss_mb_added']:>8}")
    lines.append(f"throughput, {next(iter(r['throughput'].values()))['clients']} concurrent clients")
    for label, t in r["throughput"].items():
        lines.append(f"  {label:<16} {t['lookups_per_s']:>8} lookups/s  (mean batch {t['mean_batch']},"
                     f" {t['entries']} entries, {t.get('hit_share', 0):.1%} served,"
                     f" {t.get('verified_pairs_per_lookup', 0)} pairs verified per lookup)")
    lines.append("index layouts (search only, ms per query)")
    for name, v in r["layouts"].items():
        lines.append(f"  {name:<44} {v}")
    lines.append(f"wrote {out / 'bench_semantic.json'} and {out / 'bench_semantic.png'}")
    return "\n".join(lines)
