"""`cachegate bench structured`: constrained decoding measured on SmolLM2 and Gemma 3, greedy and
seeded, each prompt with and without its grammar (same prompt text, the schema written into it).

Figures per model: `json_valid_rate` and `schema_valid_rate` of schema answers with and without the
grammar (expected 1.0 with), `tool_call_well_formed_rate` with tool_choice required and without a
grammar, and `mask_overhead` at batch 16: a decode step of 16 constrained requests ÷ the same 16 free,
side by side in one run, minus 1 (target <= 0.15). Prints a table (or --json: one JSON line), writes
bench_structured.json and a PNG.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # before torch: see engine/__init__.py

import jsonschema

from loadtests.structured_cases import SCHEMA_CASES, TOOL_CASES

MODELS = ("smollm2-135m-instruct", "gemma3-270m")
OVERHEAD_TARGET = 0.15
LONG_SCHEMA = {"type": "object", "properties": {"notes": {
    "type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 24}, "minItems": 40}},
    "required": ["notes"]}     # no answer ends early: 16 rows decode side by side


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--models", nargs="+", default=list(MODELS), help="packaged names or .gguf paths")
    p.add_argument("--quick", action="store_true", help="greedy only and fewer timed steps")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--dtype", default="auto", help="auto | float32 | bfloat16")
    p.add_argument("--max-tokens", type=int, default=96, help="budget of each schema and tool answer")
    p.add_argument("--steps", type=int, help="timed decode steps per side (default 24 quick, 48 full)")
    p.add_argument("--out", default="bench-structured", help="folder for the JSON and the PNG")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the table")


# -- answers: with and without the grammar --------------------------------------------------------

def schema_prompt(tokenizer, case) -> list[int]:
    system = f"Answer with one JSON object only, following this JSON Schema: {json.dumps(case.schema)}"
    return tokenizer.apply_chat_template([{"role": "system", "content": system},
                                          {"role": "user", "content": case.question}])


def as_json(text: str):
    """The answer as JSON, markdown code fences allowed around it; None if it is not JSON."""
    body = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        return None


def schema_rates(engine, samples, constrained: bool, max_tokens: int) -> dict[str, float]:
    from engine.guided.spec import GuideSpec
    prompts = [schema_prompt(engine.tokenizer, case) for case, _ in samples]
    params = [sampling(engine, max_tokens, seed) for _, seed in samples]
    guides = [GuideSpec.json_schema(case.schema) if constrained else None for case, _ in samples]
    outs = engine.generate_many(prompts, params, guides=guides)
    parsed = [as_json(o.text) for o in outs]
    valid = [p is not None and schema_ok(p, case.schema) for p, (case, _) in zip(parsed, samples)]
    return {"json_valid_rate": rate(p is not None for p in parsed), "schema_valid_rate": rate(valid),
            "cut_short": sum(o.finish_reason == "length" for o in outs)}


def tool_rates(engine, samples, constrained: bool, max_tokens: int) -> dict[str, float]:
    from engine.tools import parse_tool_choice, render_tool_messages, tool_guide
    prompts, guides, choices = [], [], []
    for case, _ in samples:
        choice = parse_tool_choice(case.tools, "required", False)
        messages, tools = render_tool_messages([{"role": "user", "content": case.question}], choice,
                                               engine.tokenizer.chat_template)
        prompts.append(engine.tokenizer.apply_chat_template(messages, tools=tools))
        guides.append(tool_guide(choice) if constrained else None)
        choices.append(choice)
    outs = engine.generate_many(prompts, [sampling(engine, max_tokens, seed) for _, seed in samples],
                                guides=guides)
    return {"tool_call_well_formed_rate": rate(well_formed(o.text, c) for o, c in zip(outs, choices))}


def well_formed(text: str, choice) -> bool:
    """At least one call, each naming a tool, with arguments that parse and follow its schema."""
    from engine.tools import ToolCallParser
    parser = ToolCallParser()
    parser.feed(text)
    parser.finish()
    schemas = {f["name"]: f["parameters"] for f in choice.functions}
    calls = parser.calls
    return bool(calls) and all(c["name"] in schemas and (args := as_json(c["arguments"])) is not None
                               and schema_ok(args, schemas[c["name"]]) for c in calls)


def schema_ok(value, schema) -> bool:
    try:
        jsonschema.validate(value, schema)
        return True
    except jsonschema.ValidationError:
        return False


def sampling(engine, max_tokens: int, seed: int | None):
    from engine.sampling_params import SamplingParams
    stop = list(getattr(engine.tokenizer, "chat_stop", []) or [])   # base models: the fallback transcript's
    if seed is None:
        return SamplingParams(max_tokens=max_tokens, temperature=0, stop=stop)
    return SamplingParams(max_tokens=max_tokens, temperature=0.8, top_p=0.95, seed=seed, stop=stop)


def rate(flags) -> float:
    flags = list(flags)
    return sum(flags) / len(flags) if flags else 0.0


# -- the cost of masking: decode steps of 16, constrained vs free ----------------------------------

def decode_step_s(engine, constrained: bool, steps: int) -> tuple[float, float]:
    """(median seconds per decode step of 16 requests, grammar seconds per step)."""
    from engine.guided.spec import GuideSpec
    from engine.sampling_params import SamplingParams
    from engine.sequence import Sequence
    spec = GuideSpec.json_schema(LONG_SCHEMA)
    budget = steps + engine.guides.compile(spec).min_tokens + 8     # past the timed steps: no one finishes
    params = SamplingParams(max_tokens=budget, temperature=0.8, seed=0, ignore_eos=not constrained)
    prompt = schema_prompt(engine.tokenizer, SCHEMA_CASES[6])
    seqs = [Sequence(prompt + engine.tokenizer.encode(f" ({i})"), params,
                     guide=engine.guide_state(spec, params) if constrained else None) for i in range(16)]
    for seq in seqs:
        engine.add_request(seq)
    while any(s.num_completion_tokens == 0 for s in seqs):
        engine.step()
    stats = engine.masker.stats
    grammar_before, times = stats.mask_s + stats.advance_s, []
    for _ in range(steps):
        start = time.perf_counter()
        assert len(engine.step()) == 16, "a request finished or waited: the batch is not 16 decodes"
        times.append(time.perf_counter() - start)
    grammar = (stats.mask_s + stats.advance_s - grammar_before) / steps
    for seq in seqs:
        engine.abort(seq.seq_id)
    return statistics.median(times), grammar


def overhead(engine, steps: int) -> dict[str, float]:
    decode_step_s(engine, True, 4)                     # warm both paths (compile, kernels)
    free, constrained, grammar = [], [], []
    for _ in range(2):                                 # interleaved: load on the shared cores hits both
        free.append(decode_step_s(engine, False, steps)[0])
        step, share = decode_step_s(engine, True, steps)
        constrained.append(step)
        grammar.append(share)
    free_ms, constrained_ms = 1e3 * min(free), 1e3 * min(constrained)
    return {"free_step_ms_b16": free_ms, "constrained_step_ms_b16": constrained_ms,
            "grammar_ms_per_step_b16": 1e3 * min(grammar), "mask_overhead": constrained_ms / free_ms - 1}


# -- the run ---------------------------------------------------------------------------------------

def bench_model(name: str, args: argparse.Namespace) -> dict:
    from engine.llm_engine import LLMEngine
    engine = LLMEngine.from_pretrained(name, dtype=args.dtype, num_kv_blocks=640, max_num_seqs=48)
    seeds = [None] if args.quick else [None, 1, 2]
    schema_samples = [(case, seed) for case in SCHEMA_CASES for seed in seeds]
    tool_samples = [(case, seed) for case in TOOL_CASES for seed in seeds]
    result = {"samples": {"schema": len(schema_samples), "tools": len(tool_samples)}}
    for side, constrained in (("free", False), ("constrained", True)):
        result[side] = schema_rates(engine, schema_samples, constrained, args.max_tokens) | \
            tool_rates(engine, tool_samples, constrained, args.max_tokens)
    result |= overhead(engine, args.steps or (24 if args.quick else 48))
    result["grammars_compiled"] = engine.guides.stats.compiled
    result["grammar_cache_hits"] = engine.guides.stats.cache_hits
    engine.check_integrity()
    return result


def run(args: argparse.Namespace) -> int:
    import torch

    from engine.config import dtype_name, parse_dtype
    torch.set_num_threads(args.threads)
    args.dtype = dtype_name(parse_dtype(args.dtype))
    started = time.perf_counter()
    result = {"dtype": args.dtype, "threads": args.threads, "quick": args.quick, "max_tokens": args.max_tokens,
              "cpus": os.cpu_count(), "models": {m: bench_model(m, args) for m in args.models}}
    result["seconds"] = round(time.perf_counter() - started, 1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_structured.json").write_text(json.dumps(result, indent=1))
    note = plot(result, out / "bench_structured.png")
    print(json.dumps(result) if args.json else f"{table(result)}\n\n{note}")
    return 0


def table(result: dict) -> str:
    lines = [f"{'model':<24}{'side':<13}{'json valid':>11}{'schema valid':>13}{'tool calls ok':>14}", "-" * 75]
    for model, r in result["models"].items():
        for side in ("free", "constrained"):
            s = r[side]
            lines.append(f"{model:<24}{side:<13}{s['json_valid_rate']:>11.0%}{s['schema_valid_rate']:>13.0%}"
                         f"{s['tool_call_well_formed_rate']:>14.0%}")
    lines += ["", f"{'model':<24}{'free ms/step':>13}{'constrained':>13}{'grammar ms':>12}{'overhead':>10}  target",
              "-" * 82]
    for model, r in result["models"].items():
        mark = "ok" if r["mask_overhead"] <= OVERHEAD_TARGET else "MISSED"
        lines.append(f"{model:<24}{r['free_step_ms_b16']:>13.1f}{r['constrained_step_ms_b16']:>13.1f}"
                     f"{r['grammar_ms_per_step_b16']:>12.2f}{r['mask_overhead']:>10.1%}  <= 15% {mark}")
    return "\n".join(lines)


def plot(result: dict, path: Path) -> str:
    try:
        import matplotlib
    except ImportError:
        return "matplotlib is not installed: no plot"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = list(result["models"])
    metrics = ("json_valid_rate", "schema_valid_rate", "tool_call_well_formed_rate")
    fig, axes = plt.subplots(1, len(models) + 1, figsize=(5 * (len(models) + 1), 4))
    for ax, model in zip(axes, models):
        r = result["models"][model]
        for i, side in enumerate(("free", "constrained")):
            ax.bar([m + i * 0.4 for m in range(len(metrics))], [r[side][k] for k in metrics], width=0.4, label=side)
        ax.set_xticks([m + 0.2 for m in range(len(metrics))], ["JSON", "schema", "tool calls"])
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{model}: valid rate")
        ax.legend()
    axes[-1].bar(models, [100 * result["models"][m]["mask_overhead"] for m in models], color="tab:orange")
    axes[-1].axhline(100 * OVERHEAD_TARGET, color="red", linestyle="--")
    axes[-1].set_title("masking overhead per decode step, batch 16 (%)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"plot: {path}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
