"""`bench_engine`: our engine against transformers on the same GGUF, same prompts, same greedy settings,
measured side by side in one run: load time, prefill (time to first token), decode tokens/s, total.

Both generate exactly N new tokens (EOS ignored) so the work is equal; greedy ids are compared up to the
first EOS as a check (past it transformers' min_new_tokens masks EOS while we keep it).
Prints JSON and a table, draws a PNG when matplotlib is importable.
Run: `python -m loadtests.bench_engine [--quick] [--dtypes float32,float16] [--new-tokens 64]`.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch

PROMPTS = {  # name -> chat messages, or a plain string for a completion prompt
    "short_chat": [{"role": "user", "content": "What is the capital of France?"}],
    "code": [{"role": "user", "content": "Write a Python function that merges two sorted lists."}],
    "long_chat": [
        {"role": "system", "content": "You are a meticulous support agent for an online bookshop. " * 6},
        {"role": "user", "content": "My order #48213 arrived with a torn cover and a missing bookmark. "
                                    "I paid 23.50 EUR. What are my options for a refund or a replacement? "
                                    * 3},
    ],
    "completion": "The three most important ideas in the history of science are",
}
QUICK = ("short_chat", "code")


@dataclass
class Run:
    backend: str
    dtype: str
    prompt: str
    prompt_tokens: int
    new_tokens: int
    prefill_s: float       # request start -> first new token
    decode_tok_s: float    # tokens after the first, per second
    total_s: float
    ids: list[int]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="smollm2-135m-instruct", help="packaged name or .gguf path")
    p.add_argument("--quick", action="store_true", help="2 prompts, 16 new tokens, float32 only")
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--repeats", type=int, default=3, help="runs per prompt and backend; the median is kept")
    p.add_argument("--dtypes", default="float32,float16", help="comma-separated, run for both backends")
    p.add_argument("--out", default="bench-engine", help="folder for the JSON and the PNG")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the table")


def prompt_ids(tokenizer, prompt) -> list[int]:
    return tokenizer.encode(prompt) if isinstance(prompt, str) else tokenizer.apply_chat_template(prompt)


def timed_run(backend: str, dtype: str, name: str, ids: list[int], tokens: list[int], stamps: list[float],
              start: float) -> Run:
    """stamps: when each new token arrived; start: when the request was made."""
    n = len(stamps)
    assert n == len(tokens) > 0
    decode_s = stamps[-1] - stamps[0]
    decode_tok_s = (n - 1) / decode_s if n > 1 and decode_s > 0 else 0.0
    return Run(backend, dtype, name, len(ids), n, stamps[0] - start, decode_tok_s, stamps[-1] - start, tokens)


async def engine_generate(engine, ids: list[int], n: int) -> tuple[list[int], list[float], float]:
    from engine.sampling_params import SamplingParams
    params = SamplingParams(max_tokens=n, temperature=0, ignore_eos=True)
    tokens, stamps = [], []
    start = time.perf_counter()
    async for out in engine.generate(ids, params):
        tokens += out.token_ids
        stamps.append(time.perf_counter())
    return tokens, stamps, start


class Stamps:
    """A transformers streamer that only notes when each new token arrives (the first put is the prompt)."""
    def __init__(self) -> None:
        self.times: list[float] = []
        self.seen_prompt = False

    def put(self, value) -> None:
        if self.seen_prompt:
            self.times.append(time.perf_counter())
        self.seen_prompt = True

    def end(self) -> None: ...


def hf_generate(model, ids: list[int], n: int) -> tuple[list[int], list[float], float]:
    streamer, x = Stamps(), torch.tensor([ids])
    start = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=n,
                             min_new_tokens=n, do_sample=False, streamer=streamer)
    return out[0, len(ids):].tolist(), streamer.times, start


def median_run(runs: list[Run]) -> Run:
    return sorted(runs, key=lambda r: r.total_s)[len(runs) // 2]


def load_backends(model: str, dtype: str) -> tuple[object, object, dict]:
    from transformers import AutoModelForCausalLM

    from engine import AsyncEngine
    from engine.loader import resolve_model_path
    t0 = time.perf_counter()
    engine = AsyncEngine.from_pretrained(model, dtype=dtype)
    t1 = time.perf_counter()
    path = resolve_model_path(model)
    hf = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=getattr(torch, dtype))
    hf.eval()
    t2 = time.perf_counter()
    return engine, hf, {"engine": t1 - t0, "transformers": t2 - t1}


def bench_dtype(args: argparse.Namespace, dtype: str, names: list[str], n: int) -> tuple[list[Run], dict]:
    engine, hf, load_s = load_backends(args.model, dtype)
    runs = []
    try:
        warm = prompt_ids(engine.tokenizer, PROMPTS["short_chat"])
        asyncio.run(engine_generate(engine, warm, 4))
        hf_generate(hf, warm, 4)
        for name in names:                       # side by side, prompt by prompt
            ids = prompt_ids(engine.tokenizer, PROMPTS[name])
            ours, theirs = [], []
            for _ in range(args.repeats):            # alternate, so drift on a shared machine hits both
                ours.append(timed_run("engine", dtype, name, ids,
                                      *asyncio.run(engine_generate(engine, ids, n))))
                theirs.append(timed_run("transformers", dtype, name, ids, *hf_generate(hf, ids, n)))
            runs += [median_run(ours), median_run(theirs)]
    finally:
        asyncio.run(engine.shutdown())
    return runs, load_s


def same_until_eos(ours: list[int], theirs: list[int], eos: int = 2) -> bool:
    k = ours.index(eos) if eos in ours else len(ours)
    return ours[:k] == theirs[:k]


def summarize(runs: list[Run], loads: dict) -> dict:
    summary = {}
    for backend, dtype in dict.fromkeys((r.backend, r.dtype) for r in runs):
        mine = [r for r in runs if (r.backend, r.dtype) == (backend, dtype)]
        summary[f"{backend}/{dtype}"] = {
            "load_s": round(loads[dtype][backend], 2),
            "prefill_ms": round(1000 * statistics.mean(r.prefill_s for r in mine), 1),
            "decode_tok_s": round(statistics.mean(r.decode_tok_s for r in mine), 1),
            "total_s": round(sum(r.total_s for r in mine), 2),
        }
    for dtype in loads:
        pairs = [(a, b) for a in runs for b in runs if a.dtype == b.dtype == dtype and a.prompt == b.prompt
                 and (a.backend, b.backend) == ("engine", "transformers")]
        same = sum(same_until_eos(a.ids, b.ids) for a, b in pairs)
        summary[f"engine/{dtype}"]["same_greedy_ids"] = f"{same}/{len(pairs)}"
    return summary


def table(result: dict) -> str:
    head = f"{'backend/dtype':<22}{'load s':>8}{'prefill ms':>12}{'decode tok/s':>14}{'total s':>9}  same ids"
    lines = [head, "-" * len(head)]
    for key, s in result["summary"].items():
        lines.append(f"{key:<22}{s['load_s']:>8}{s['prefill_ms']:>12}{s['decode_tok_s']:>14}"
                     f"{s['total_s']:>9}  {s.get('same_greedy_ids', '')}")
    lines.append("")
    lines.append(f"{'prompt':<12}{'tokens':>7}  " + "  ".join(f"{k:>22}" for k in result["summary"]))
    for name in dict.fromkeys(r["prompt"] for r in result["runs"]):
        rows = {f"{r['backend']}/{r['dtype']}": r for r in result["runs"] if r["prompt"] == name}
        cells = [f"{1000 * rows[k]['prefill_s']:>8.0f} ms {rows[k]['decode_tok_s']:>6.1f} t/s" for k in rows]
        lines.append(f"{name:<12}{next(iter(rows.values()))['prompt_tokens']:>7}  " + "  ".join(cells))
    return "\n".join(lines)


def plot(result: dict, path: Path) -> str:
    try:
        import matplotlib
    except ImportError:
        return "matplotlib is not installed: no plot"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = list(result["summary"])
    colors = ["tab:green" if k.startswith("engine") else "tab:grey" for k in keys]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    panels = (("prefill_ms", "prefill (ms, lower is better)"),
              ("decode_tok_s", "decode tokens/s (higher is better)"),
              ("total_s", "total s over all prompts (lower is better)"))
    for ax, (metric, label) in zip(axes, panels, strict=True):
        ax.bar(keys, [result["summary"][k][metric] for k in keys], color=colors)
        ax.set_title(label)
        ax.tick_params(axis="x", rotation=30)
    fig.suptitle(f"engine vs transformers, {result['model']}, {result['new_tokens']} new tokens, "
                 f"{result['cpus']} CPUs")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"plot: {path}"


def run(args: argparse.Namespace) -> int:
    names = list(QUICK if args.quick else PROMPTS)
    n = 16 if args.quick else args.new_tokens
    args.repeats = 1 if args.quick else args.repeats
    dtypes = ["float32"] if args.quick else args.dtypes.split(",")
    runs, loads = [], {}
    for dtype in dtypes:
        dtype_runs, loads[dtype] = bench_dtype(args, dtype, names, n)
        runs += dtype_runs
    result = {"model": args.model, "new_tokens": n, "repeats": args.repeats, "cpus": os.cpu_count(),
              "torch_threads": torch.get_num_threads(), "summary": summarize(runs, loads),
              "runs": [asdict(r) for r in runs]}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_engine.json").write_text(json.dumps(result, indent=1))
    note = plot(result, out / "bench_engine.png")
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{json.dumps(result['summary'])}\n\n{table(result)}\n\n{note}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
