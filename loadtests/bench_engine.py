"""`cachegate bench engine`: the serving engine against transformers on the same GGUF (SmolLM2), same
token ids for every side, greedy, a fixed number of new tokens (EOS ignored), torch threads pinned,
one warm-up, the median of repeated runs.

Figures (JSON keys): `throughput_ratio_vs_hf` (16 concurrent requests through the engine ÷ transformers
`generate` one request after another, target >= 10 in bfloat16, >= 6 in float32), `batched_ratio_vs_hf`
(÷ transformers on the 16 prompts as one left-padded batch, >= 1.5), `decode_latency_ratio_vs_hf` (time per output token at batch 1,
<= 1.1), `prefix_ttft_ratio` (TTFT with a cached 1024-token prefix ÷ cold, <= 0.1), and
`shared_prefix_speedup` (groups of requests sharing a system prompt: throughput with the prefix cache
on ÷ off). Prints a table (or, with --json, one JSON line), writes bench_engine.json and a PNG.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # before torch: see engine/__init__.py

import torch

from cachegate.settings import DTYPE_CHOICES
from engine.config import dtype_name, parse_dtype

TARGETS = {"throughput_ratio_vs_hf": (">=", 10.0), "batched_ratio_vs_hf": (">=", 1.5),
           "decode_latency_ratio_vs_hf": ("<=", 1.1), "prefix_ttft_ratio": ("<=", 0.1)}
TOPICS = ["a refund for a torn book cover", "shipping to Norway", "a gift card that does not work",
          "the opening hours on Sunday", "a recommendation for a mystery novel", "a missing bookmark",
          "an order that arrived twice", "changing the delivery address", "a discount for students",
          "the difference between paperback and hardcover", "a signed first edition", "e-book formats",
          "a late delivery", "a damaged parcel", "loyalty points", "a wrong invoice"]


@dataclass
class Plan:
    """How big each part of the run is (quick or full)."""
    new_tokens: int
    repeats: int
    prompt_words: tuple[int, int]   # words per request prompt, min and max
    prefix_tokens: int              # the cached prefix of the TTFT test
    groups: int                     # shared-prefix workload: groups x per_group requests
    per_group: int
    system_tokens: int


QUICK = Plan(new_tokens=32, repeats=1, prompt_words=(8, 40), prefix_tokens=1024, groups=4, per_group=4,
             system_tokens=128)
FULL = Plan(new_tokens=64, repeats=3, prompt_words=(20, 120), prefix_tokens=1024, groups=8, per_group=8,
            system_tokens=512)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="smollm2-135m-instruct", help="packaged name or .gguf path")
    p.add_argument("--quick", action="store_true", help="small sizes, one run each (about a minute)")
    p.add_argument("--threads", type=int, default=1, help="torch threads, pinned for both sides")
    p.add_argument("--dtype", default="auto", choices=DTYPE_CHOICES,
                   help="weights and activations, the same on both sides; auto (the gateway's default): "
                        "bfloat16 where the device computes it natively (avx512_bf16, AMX, GPUs), else float32")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N]; both sides run there")
    p.add_argument("--new-tokens", type=int, help="tokens generated per request (default 32 quick, 64 full)")
    p.add_argument("--repeats", type=int, help="runs per measurement; the median is kept (1 quick, 3 full)")
    p.add_argument("--out", default="bench-engine", help="folder for the JSON and the PNG")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the table")
    p.add_argument("--compile", action="store_true", help="the engine with torch.compile'd decoder layers")
    p.add_argument("--cuda-graphs", action="store_true", help="CUDA: the engine replays decode steps from graphs")


# -- workloads: token ids shared by both sides -----------------------------------------------------

def request_prompts(tokenizer, plan: Plan, seed: int) -> list[list[int]]:
    """16 support questions of mixed length, as token ids."""
    rng = random.Random(seed)
    words = " ".join(TOPICS).split()
    prompts = []
    for topic in TOPICS:
        filler = " ".join(rng.choices(words, k=rng.randint(*plan.prompt_words)))
        prompts.append(tokenizer.encode(f"Customer ({seed}) asks about {topic}. Context: {filler}. Reply:"))
    return prompts


def text_of_tokens(tokenizer, n: int, seed: int) -> list[int]:
    """A document-like prefix of exactly n token ids."""
    rng = random.Random(seed)
    words = " ".join(TOPICS).split()
    ids: list[int] = []
    while len(ids) < n:
        ids += tokenizer.encode(" ".join(rng.choices(words, k=64)) + ".\n")
    return ids[:n]


# -- the engine side -------------------------------------------------------------------------------

def engine_run(engine, prompts: list[list[int]], n: int) -> tuple[float, list[list[int]]]:
    """All prompts at once (continuous batching), from a cold prefix cache: (seconds, token ids)."""
    from engine.sampling_params import SamplingParams
    engine.reset_prefix_cache()
    start = time.perf_counter()
    outs = engine.generate_many(prompts, SamplingParams(max_tokens=n, temperature=0, ignore_eos=True))
    return time.perf_counter() - start, [o.token_ids for o in outs]


def engine_single(engine, ids: list[int], n: int, cold: bool = True) -> tuple[float, float]:
    """One request: (TTFT s, time per output token after the first s)."""
    from engine.sampling_params import SamplingParams
    from engine.sequence import Sequence
    if cold:
        engine.reset_prefix_cache()
    seq = Sequence(ids, SamplingParams(max_tokens=n, temperature=0, ignore_eos=True))
    stamps = [time.perf_counter()]
    for _ in engine.stream(seq):
        stamps.append(time.perf_counter())
    return stamps[1] - stamps[0], (stamps[-1] - stamps[1]) / max(1, n - 1)


# -- the transformers side -------------------------------------------------------------------------

class Stamps:
    """A transformers streamer that notes when each new token arrives (its first put is the prompt)."""
    def __init__(self) -> None:
        self.times: list[float] = []
        self.seen_prompt = False

    def put(self, value) -> None:
        if value.is_cuda:
            torch.cuda.synchronize(value.device)
        if self.seen_prompt:
            self.times.append(time.perf_counter())
        self.seen_prompt = True

    def end(self) -> None: ...


def hf_generate(model, batch: list[list[int]], n: int, streamer=None) -> list[list[int]]:
    """Greedy, exactly n new tokens; a batch is left-padded (pad id 0) under an attention mask."""
    width = max(len(ids) for ids in batch)
    x = torch.tensor([[0] * (width - len(ids)) + ids for ids in batch], device=model.device)
    mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in batch], device=model.device)
    with torch.inference_mode():
        out = model.generate(input_ids=x, attention_mask=mask, max_new_tokens=n, min_new_tokens=n,
                             do_sample=False, pad_token_id=0, streamer=streamer)
    return out[:, width:].tolist()


def hf_sequential(model, prompts, n) -> tuple[float, list[list[int]]]:
    start = time.perf_counter()
    ids = [hf_generate(model, [p], n)[0] for p in prompts]
    return time.perf_counter() - start, ids


def hf_batched(model, prompts, n) -> float:
    start = time.perf_counter()
    hf_generate(model, prompts, n)
    return time.perf_counter() - start


def hf_single(model, ids: list[int], n: int) -> tuple[float, float]:
    stamps = Stamps()
    start = time.perf_counter()
    hf_generate(model, [ids], n, streamer=stamps)
    return stamps.times[0] - start, (stamps.times[-1] - stamps.times[0]) / max(1, n - 1)


# -- measurements ----------------------------------------------------------------------------------

def median(runs: list[float]) -> float:
    return statistics.median(runs)


def same_until_eos(ours: list[int], theirs: list[int], eos: list[int]) -> bool:
    """Greedy ids agree up to the first EOS: past it transformers' min_new_tokens masks EOS out,
    while ignore_eos keeps sampling it, so the two continue differently by design."""
    k = next((i for i, t in enumerate(ours) if t in eos), len(ours))
    return ours[:k] == theirs[:k]


def throughput(engine, hf, tokenizer, plan: Plan) -> dict:
    n, total = plan.new_tokens, len(TOPICS) * plan.new_tokens
    engine_s, hf_seq_s, hf_batch_s, same = [], [], [], 0
    for r in range(plan.repeats):                 # fresh prompts each repeat; both sides get the same ids
        prompts = request_prompts(tokenizer, plan, seed=r)
        seconds, ours = engine_run(engine, prompts, n)
        engine_s.append(seconds)
        seconds, theirs = hf_sequential(hf, prompts, n)
        hf_seq_s.append(seconds)
        hf_batch_s.append(hf_batched(hf, prompts, n))
        same = sum(same_until_eos(a, b, engine.config.eos_token_ids) for a, b in zip(ours, theirs))
    return {"engine_concurrent_tok_s": total / median(engine_s), "hf_sequential_tok_s": total / median(hf_seq_s),
            "hf_batched_tok_s": total / median(hf_batch_s), "same_greedy_ids": f"{same}/{len(TOPICS)}",
            "mean_prompt_tokens": round(statistics.mean(len(p) for p in prompts), 1)}


def latency(engine, hf, tokenizer, plan: Plan) -> dict:
    ids = request_prompts(tokenizer, plan, seed=99)[0]
    ours = [engine_single(engine, ids, plan.new_tokens)[1] for _ in range(plan.repeats)]
    theirs = [hf_single(hf, ids, plan.new_tokens)[1] for _ in range(plan.repeats)]
    return {"engine_tpot_ms": 1000 * median(ours), "hf_tpot_ms": 1000 * median(theirs)}


def prefix_ttft(engine, tokenizer, plan: Plan) -> dict:
    prefix = text_of_tokens(tokenizer, plan.prefix_tokens, seed=7)
    cold, warm = [], []
    for r in range(plan.repeats):
        question = tokenizer.encode(f" Question {r}: what does the document above say about gift cards?")
        cold.append(engine_single(engine, prefix + question, 2, cold=True)[0])
        engine_single(engine, prefix + tokenizer.encode(f" Another question {r}?"), 1, cold=True)  # caches it
        warm.append(engine_single(engine, prefix + question, 2, cold=False)[0])
    return {"cold_ttft_ms": 1000 * median(cold), "cached_ttft_ms": 1000 * median(warm)}


def shared_prefix(engine, tokenizer, plan: Plan) -> dict:
    prompts = []
    for g in range(plan.groups):
        system = text_of_tokens(tokenizer, plan.system_tokens, seed=100 + g)
        prompts += [system + tokenizer.encode(f" Q{i}: {TOPICS[i % len(TOPICS)]}?") for i in range(plan.per_group)]
    total, out, counters = len(prompts) * plan.new_tokens, {}, engine.counters
    before = (counters.prompt_tokens, counters.cached_prompt_tokens)
    out["shared_prefix_on_tok_s"] = total / engine_run(engine, prompts, plan.new_tokens)[0]   # one run each:
    out["shared_prefix_hit_rate"] = ((counters.cached_prompt_tokens - before[1])
                                     / (counters.prompt_tokens - before[0]))
    engine.reset_prefix_cache()
    cache, engine.blocks.cache = engine.blocks.cache, None          # the same engine, prefix cache off
    try:
        out["shared_prefix_off_tok_s"] = total / engine_run(engine, prompts, plan.new_tokens)[0]  # 34k tokens
    finally:
        engine.blocks.cache = cache
    return out


# -- report ----------------------------------------------------------------------------------------

def ratios(f: dict) -> dict:
    return {
        "throughput_ratio_vs_hf": f["engine_concurrent_tok_s"] / f["hf_sequential_tok_s"],
        "batched_ratio_vs_hf": f["engine_concurrent_tok_s"] / f["hf_batched_tok_s"],
        "decode_latency_ratio_vs_hf": f["engine_tpot_ms"] / f["hf_tpot_ms"],
        "prefix_ttft_ratio": f["cached_ttft_ms"] / f["cold_ttft_ms"],
        "shared_prefix_speedup": f["shared_prefix_on_tok_s"] / f["shared_prefix_off_tok_s"],
    }


def targets(dtype: str) -> dict:
    """The targets of a run: 16 concurrent requests need only 6x transformers one by one in float32."""
    return TARGETS | ({"throughput_ratio_vs_hf": (">=", 6.0)} if dtype == "float32" else {})


def met(key: str, value: float, dtype: str) -> bool:
    op, target = targets(dtype)[key]
    return value >= target if op == ">=" else value <= target


def rounded(d: dict) -> dict:
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in d.items()}


def table(result: dict) -> str:
    lines = [f"{'ratio':<30}{'value':>9}  target", "-" * 50]
    for key, value in result["ratios"].items():
        target = " ".join(map(str, targets(result["dtype"])[key])) if key in TARGETS else ""
        mark = ("ok" if met(key, value, result["dtype"]) else "MISSED") if key in TARGETS else ""
        lines.append(f"{key:<30}{value:>9.3f}  {target} {mark}")
    lines += ["", f"{'figure':<30}{'value':>12}", "-" * 42]
    lines += [f"{key:<30}{value!s:>12}" for key, value in result["figures"].items()]
    return "\n".join(lines)


def plot(result: dict, path: Path) -> str:
    try:
        import matplotlib
    except ImportError:
        return "matplotlib is not installed: no plot"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    f = result["figures"]
    panels = [
        ("output tokens/s, 16 requests", {"engine\n(concurrent)": f["engine_concurrent_tok_s"],
                                          "HF\nsequential": f["hf_sequential_tok_s"],
                                          "HF\npadded batch": f["hf_batched_tok_s"]}),
        ("ms per output token, batch 1", {"engine": f["engine_tpot_ms"], "HF": f["hf_tpot_ms"]}),
        (f"TTFT ms, {result['plan']['prefix_tokens']}-token prefix", {"cold": f["cold_ttft_ms"],
                                                                       "cached": f["cached_ttft_ms"]}),
        ("shared-prefix tokens/s", {"cache on": f["shared_prefix_on_tok_s"], "cache off": f["shared_prefix_off_tok_s"]}),
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(16, 4))
    for ax, (title, bars) in zip(axes, panels, strict=True):
        ax.bar(list(bars), list(bars.values()), color=["tab:green"] + ["tab:grey"] * (len(bars) - 1))
        ax.set_title(title)
    summary = ", ".join(f"{k.replace('_vs_hf', '')} {v:.2f}" for k, v in result["ratios"].items())
    fig.suptitle(f"engine vs transformers, {result['model']} {result['dtype']}, {result['threads']} thread(s): "
                 f"{summary}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"plot: {path}"


def load(model: str, dtype: str, device: str, **options):
    """`options`: engine settings beyond the benchmark's own (compile, cuda_graphs)."""
    from transformers import AutoModelForCausalLM

    from engine.llm_engine import LLMEngine
    from engine.loader import resolve_model_path
    engine = LLMEngine.from_pretrained(model, device=device, dtype=dtype, num_kv_blocks=1024,
                                       max_num_batched_tokens=512, max_num_seqs=64, **options)
    path = resolve_model_path(model)
    hf = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=getattr(torch, dtype))
    return engine, hf.to(device).eval()


def warm_up(engine, hf, tokenizer) -> None:
    ids = tokenizer.encode("Warm-up: hello there, how are you today?")
    engine_run(engine, [ids, ids[:-2]], 4)
    hf_generate(hf, [ids, ids[:-2]], 4)
    hf_generate(hf, [ids], 4)


def run(args: argparse.Namespace) -> int:
    torch.set_num_threads(args.threads)
    plan = QUICK if args.quick else FULL
    plan = Plan(**{**plan.__dict__, "new_tokens": args.new_tokens or plan.new_tokens,
                   "repeats": args.repeats or plan.repeats})
    started = time.perf_counter()
    args.dtype = dtype_name(parse_dtype(args.dtype, args.device))
    engine, hf = load(args.model, args.dtype, args.device, compile=args.compile, cuda_graphs=args.cuda_graphs)
    tokenizer = engine.tokenizer
    warm_up(engine, hf, tokenizer)
    figures = {}
    for part in (throughput(engine, hf, tokenizer, plan), latency(engine, hf, tokenizer, plan),
                 prefix_ttft(engine, tokenizer, plan), shared_prefix(engine, tokenizer, plan)):
        figures |= part
    engine.check_integrity()
    result = {"model": args.model, "device": args.device, "dtype": args.dtype, "quick": args.quick,
              "threads": args.threads, "cpus": os.cpu_count(), "compile": args.compile,
              "cuda_graphs": args.cuda_graphs, "attention": engine.runner.backend.name,
              "load_avg": round(os.getloadavg()[0], 2), "plan": plan.__dict__,
              "ratios": rounded(ratios(figures)), "figures": rounded(figures),
              "seconds": round(time.perf_counter() - started, 1)}
    result |= result["ratios"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_engine.json").write_text(json.dumps(result, indent=1))
    note = plot(result, out / "bench_engine.png")
    print(json.dumps(result) if args.json else f"{json.dumps(result)}\n\n{table(result)}\n\n{note}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
