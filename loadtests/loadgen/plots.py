"""PNG plots of a run: latency CDF per cache outcome, hit rate over time (per tier), throughput over time."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from loadtests.loadgen.result import OUTCOMES, Result


def latency_cdf(results: list[Result], title: str, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4))
    for outcome in OUTCOMES:
        values = sorted(r.latency_ms for r in results if r.ok and r.outcome == outcome)
        if values:
            shares = [0.0] + [(i + 1) / len(values) for i in range(len(values))]
            ax.step([values[0]] + values, shares, where="post", label=f"{outcome} (n={len(values)})")
    ax.set(xscale="log", xlabel="latency (ms, log)", ylabel="share of requests", title=f"{title}: latency CDF")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right")
    save(fig, path)


def hit_rate(rows: list[dict[str, Any]], title: str, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4))
    t = [r["t_s"] for r in rows]
    share = {tier: [r[f"hit-{tier}"] / r["answered"] if r["answered"] else 0 for r in rows]
             for tier in ("exact", "curated", "semantic")}
    ax.stackplot(t, *share.values(), labels=list(share), alpha=0.8, step="post")
    ax.set(xlabel="time (s)", ylabel="hit rate", ylim=(0, 1), title=f"{title}: hit rate over time")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    save(fig, path)


def throughput(rows: list[dict[str, Any]], title: str, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.step([r["t_s"] for r in rows], [r["throughput_rps"] for r in rows], where="post", label="answered")
    ax.set(xlabel="time (s)", ylabel="requests / s", title=f"{title}: throughput over time")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    save(fig, path)


def save(fig: Any, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw(results: list[Result], rows: list[dict[str, Any]], title: str, folder: Path, stem: str) -> list[str]:
    paths = [folder / f"{stem}-latency-cdf.png", folder / f"{stem}-hit-rate.png", folder / f"{stem}-throughput.png"]
    latency_cdf(results, title, paths[0])
    hit_rate(rows, title, paths[1])
    throughput(rows, title, paths[2])
    return [str(p) for p in paths]
