"""Embedder variants side by side: float32, bfloat16 and int8 (dynamic, all linear layers or attention
only) at one and two torch threads. Speed (one question, batches of 16) and what it costs in accuracy:
cosine agreement with float32 and the shipped policy's decisions on labeled pairs. JSON + table + PNG.

    python -m loadtests.bench_semantic_embed [--pairs 800] [--out bench-semantic]
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "semantic" / "qqp_dev.csv"
VARIANTS = (("float32", 1), ("float32", 2), ("bfloat16", 1), ("bfloat16", 2), ("int8", 1), ("int8-attention", 1))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=800, help="labeled pairs whose decisions are compared")
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--out", default="bench-semantic")
    args = p.parse_args(argv)
    from cachegate.cache.semantic.datasets import read_pairs_csv
    pairs = read_pairs_csv(args.data)[: args.pairs]
    texts = sorted({t for q in pairs for t in (q.a, q.b)})
    models = {}
    result = {"load_average_start": [round(x, 2) for x in os.getloadavg()], "variants": {}}
    reference = None
    for kind, threads in VARIANTS:
        model = models.setdefault(kind, build(kind))
        vectors = dict(zip(texts, encode_all(model, texts, threads)))
        reference = reference or vectors
        result["variants"][f"{kind}/{threads}t"] = {**speed(model, texts, threads),
                                                     **accuracy(vectors, reference, pairs)}
    result["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_semantic_embed.json").write_text(json.dumps(result, indent=1))
    plot(result, out / "bench_semantic_embed.png")
    print(json.dumps(result))
    print(table(result))
    return 0


def build(kind: str):
    import torch

    from cachegate.cache.semantic.embedder import PACKAGED, load_model
    if kind in ("float32", "bfloat16"):
        return load_model(PACKAGED, kind)
    layers = {n for n, m in load_model(PACKAGED).named_modules() if isinstance(m, torch.nn.Linear)
              and (kind == "int8" or ".attention." in n)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(copy.deepcopy(load_model(PACKAGED)), layers, dtype=torch.qint8)


def encode(model, texts: list[str]) -> np.ndarray:
    import torch
    with torch.inference_mode():
        v = model.forward(model.preprocess(texts))["sentence_embedding"].float().numpy()
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def encode_all(model, texts: list[str], threads: int) -> np.ndarray:
    import torch
    torch.set_num_threads(threads)    # this thread only
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), 384), np.float32)
    for i in range(0, len(order), 64):
        rows = order[i: i + 64]
        out[rows] = encode(model, [texts[r] for r in rows])
    return out


def speed(model, texts: list[str], threads: int) -> dict:
    import torch
    torch.set_num_threads(threads)
    encode(model, texts[:16])
    single = []
    for t in texts[:80]:
        started = time.perf_counter()
        encode(model, [t])
        single.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    for i in range(0, 320, 16):
        encode(model, texts[i: i + 16])
    return {"single_p50_ms": round(float(np.percentile(single, 50)), 2),
            "batch16_per_s": round(320 / (time.perf_counter() - started), 1)}


def accuracy(vectors: dict, reference: dict, pairs) -> dict:
    from cachegate.cache.semantic.policy_file import packaged_policy
    from policies.thresholds import Candidate, policy_from_dict
    agree = np.array([float(vectors[t] @ reference[t]) for t in vectors])
    policy = policy_from_dict(packaged_policy())

    def decide(v):
        return [policy.decide(Candidate(p.b, p.a, float(v[p.a] @ v[p.b]), query_vector=v[p.b],
                                        entry_vector=v[p.a])).hit for p in pairs]
    mine, ref = decide(vectors), decide(reference)
    return {"cosine_to_float32_mean": round(float(agree.mean()), 5), "cosine_to_float32_min": round(float(agree.min()), 5),
            "decisions_changed": int(sum(a != b for a, b in zip(mine, ref))), "pairs": len(pairs)}


def table(r: dict) -> str:
    lines = [f"embedder variants (load average {r['load_average_start']} -> {r['load_average_end']})",
             f"{'variant':<18}{'1 question ms':>14}{'batch16 /s':>12}{'cos mean':>10}{'cos min':>9}{'decisions':>11}"]
    for name, v in r["variants"].items():
        lines.append(f"{name:<18}{v['single_p50_ms']:>14}{v['batch16_per_s']:>12}{v['cosine_to_float32_mean']:>10}"
                     f"{v['cosine_to_float32_min']:>9}{v['decisions_changed']:>6}/{v['pairs']}")
    return "\n".join(lines)


def plot(r: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(r["variants"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
    left.bar(names, [r["variants"][n]["single_p50_ms"] for n in names])
    left.set(ylabel="ms", title="one question, p50")
    right.bar(names, [r["variants"][n]["batch16_per_s"] for n in names], color="tab:green")
    right.set(ylabel="questions/s", title="batches of 16")
    for ax in (left, right):
        ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
