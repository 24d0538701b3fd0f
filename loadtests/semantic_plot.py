"""The benchmark's picture: lookup latency by entry count, and lookups/s with and without micro-batching."""
from __future__ import annotations

from pathlib import Path


def plot(result: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    sizes = list(result["sizes"].values())
    xs = [s["entries"] for s in sizes]
    for key, style in (("p50", "o-"), ("p99", "s--")):
        left.plot(xs, [s["lookup_ms"][key] for s in sizes], style, label=f"lookup {key}")
    left.plot(xs, [s["embed_ms"]["p50"] for s in sizes], "^:", label="embedding alone p50")
    left.axhline(12, color="grey", lw=0.8, ls="--", label="target p50 12 ms")
    left.set(xscale="log", xlabel="entries in scope", ylabel="ms", title="added latency of a semantic lookup")
    left.legend()
    labels = list(result["throughput"])
    colours = ["tab:green", "tab:grey", "tab:orange"][: len(labels)]
    right.bar(labels, [result["throughput"][k]["lookups_per_s"] for k in labels], color=colours)
    right.axhline(200, color="grey", lw=0.8, ls="--", label="target 200/s")
    right.set(ylabel="lookups/s", title=f"{next(iter(result['throughput'].values()))['clients']} concurrent clients")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
