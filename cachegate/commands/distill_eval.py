"""`cachegate eval distill --model DIR --log HELD_OUT`: the base small model and the distilled one answer the
same held-out requests; how close each comes to the large model's logged answers (ROUGE-L, embedding
similarity, exact match on short answers), their tokens/s, and the share the router could send small.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="the distilled model folder (or any model spec)")
    p.add_argument("--log", required=True, help="held-out requests: a JSONL file or a log folder")
    p.add_argument("--base", default="smollm2-135m-instruct", help="what it is compared with")
    p.add_argument("--limit", type=int, default=None, help="at most this many requests")
    p.add_argument("--max-tokens", type=int, default=96, help="answer length where the log has none")
    p.add_argument("--dtype", default="auto", help="engine dtype of both models (the gateway's default: auto)")
    p.add_argument("--agree-at", type=float, default=0.8, help="embedding cosine at which an answer agrees")
    p.add_argument("--no-embed", action="store_true", help="ROUGE-L and exact match only (no MiniLM)")
    p.add_argument("--speed-prompts", type=int, default=16, help="prompts of the fixed-length speed run (0: none)")
    p.add_argument("--speed-tokens", type=int, default=64, help="tokens each speed-run prompt decodes")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=None, help="the JSON report (default: eval_distill.json beside the model)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON line")


def run(args: argparse.Namespace) -> int:
    import torch
    torch.set_num_threads(args.threads)
    from cachegate.distill.compare import CompareOptions, compare, table
    from cachegate.distill.data import unique
    from cachegate.distill.sinks import read_entries
    entries = unique(read_entries(args.log))[:args.limit]
    if not entries:
        print(f"cachegate eval distill: no entries in {args.log}")
        return 2
    opts = CompareOptions(max_tokens=args.max_tokens, dtype=args.dtype, agree_at=args.agree_at,
                          embed=not args.no_embed, speed_prompts=args.speed_prompts,
                          speed_tokens=args.speed_tokens)
    report = compare(entries, {"base": args.base, "distilled": args.model}, opts)
    out = Path(args.out) if args.out else (Path(args.model) if Path(args.model).is_dir() else Path(".")) \
        / "eval_distill.json"
    out.write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "per_request"}) if args.json else table(report))
    return 0
