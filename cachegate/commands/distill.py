"""`cachegate distill --from LOG --base smollm2-135m-instruct --out DIR`: LoRA adapters fitted on CPU to the
large tier's logged answers, merged into a model folder the engine serves like any HF folder; a held-out
slice of the log is answered by the base and the distilled model, and the figures are printed and kept.

DIR gets config.json, model.safetensors, the tokenizer, adapter/ (the adapter alone, and its settings),
held_out.jsonl (for `cachegate eval distill`) and distill.json (training and held-out figures).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

QUICK = {"epochs": 8, "lr": 2e-3, "max_examples": 8, "held_out_limit": 4}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="source", required=True,
                   help="the answer log: a distill.log_path folder, a JSONL file, or redis://host:port/db[?prefix=]")
    p.add_argument("--base", default="smollm2-135m-instruct", help="the small model: packaged name, .gguf or HF folder")
    p.add_argument("--out", required=True, help="folder for the distilled model and its figures")
    p.add_argument("--tenant", default=None, help="train on this tenant's entries only")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lora-rank", type=int, default=16)
    p.add_argument("--lora-alpha", type=float, default=None, help="default: twice the rank")
    p.add_argument("--lr", type=float, default=4e-4)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--held-out", type=float, default=0.15, help="share of requests kept out of training")
    p.add_argument("--max-examples", type=int, default=None, help="train on at most this many requests")
    p.add_argument("--max-tokens", type=int, default=96, help="answer length on held-out requests (when unlogged)")
    p.add_argument("--precision", choices=("auto", "float32", "bfloat16"), default="auto",
                   help="training forward pass: auto = bfloat16 autocast where the CPU has AMX tiles")
    p.add_argument("--save-dtype", choices=("bfloat16", "float32"), default="bfloat16")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--eval", action=argparse.BooleanOptionalAction, default=True,
                   help="answer the held-out slice with the base and the distilled model (default on)")
    p.add_argument("--quick", action="store_true",
                   help=f"a smoke run: {QUICK['max_examples']} requests, {QUICK['epochs']} epochs at a high rate")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--json", action="store_true", help="print distill.json instead of the table")


def run(args: argparse.Namespace) -> int:
    import torch
    torch.set_num_threads(args.threads)
    from cachegate.distill import data
    from cachegate.distill.entry import write_entries
    from cachegate.distill.sinks import read_entries
    entries = data.unique(read_entries(args.source, args.tenant))
    train_set, held_out = data.split(entries, args.held_out, args.seed)
    if args.quick or args.max_examples:
        train_set = train_set[:QUICK["max_examples"] if args.quick else args.max_examples]
    if not train_set:
        print(f"cachegate distill: no usable entries in {args.source}", file=sys.stderr)
        return 2
    out = Path(args.out)
    figures = fit(args, train_set, out)
    write_entries(out / "held_out.jsonl", held_out)
    figures |= {"out": str(out), "source": str(args.source), "tenant": args.tenant, "requests": len(entries),
                "train_requests": len(train_set), "held_out_requests": len(held_out)}
    if args.eval and held_out:
        figures["held_out"] = held_out_figures(args, held_out[:QUICK["held_out_limit"]] if args.quick else held_out, out)
    (out / "distill.json").write_text(json.dumps(figures, indent=1))
    print(json.dumps(figures) if args.json else render(figures))
    return 0


def fit(args: argparse.Namespace, train_set, out: Path) -> dict:
    import torch
    from safetensors.torch import save_file

    from cachegate.cache.semantic.embedder import cpu_flags
    from cachegate.distill.data import examples
    from cachegate.distill.hf_model import save_folder, to_transformers
    from cachegate.distill.lora import adapter_tensors, add_adapters, merge_adapters
    from cachegate.distill.train import TrainConfig, train
    from engine.loader import load_checkpoint
    checkpoint = load_checkpoint(args.base)
    model = to_transformers(checkpoint)
    alpha = args.lora_alpha or 2.0 * args.lora_rank
    adapters = add_adapters(model, args.lora_rank, alpha)
    xs = examples(checkpoint.tokenizer, train_set, checkpoint.config.eos_token_ids)
    cfg = TrainConfig(epochs=QUICK["epochs"] if args.quick else args.epochs, batch_size=args.batch_size,
                      lr=QUICK["lr"] if args.quick else args.lr, seed=args.seed,
                      bf16=args.precision == "bfloat16" or (args.precision == "auto" and "amx_bf16" in cpu_flags()))
    result = train(model, adapters, xs, cfg, progress=not args.no_progress)
    out.mkdir(parents=True, exist_ok=True)
    (out / "adapter").mkdir(parents=True, exist_ok=True)       # apart: the engine loads every *.safetensors of DIR
    save_file(adapter_tensors(adapters), str(out / "adapter" / "lora.safetensors"))
    merge_adapters(model, adapters)
    save_folder(model, checkpoint, out, getattr(torch, args.save_dtype))
    meta = {"base": args.base, "lora_rank": args.lora_rank, "lora_alpha": alpha, "seed": args.seed,
            "train": asdict(cfg), "examples": len(xs), "threads": torch.get_num_threads()}
    (out / "adapter" / "adapter.json").write_text(json.dumps(meta, indent=1))
    return meta | {"training": asdict(result) | {"seconds": round(result.seconds, 1),
                                                 "cpu_seconds": round(result.cpu_seconds, 1)}, "finished": time.time()}


def held_out_figures(args: argparse.Namespace, held_out, out: Path) -> dict:
    from cachegate.distill.compare import CompareOptions, compare
    opts = CompareOptions(max_tokens=args.max_tokens, embed=not args.quick, speed_prompts=0 if args.quick else 16)
    report = compare(held_out, {"base": args.base, "distilled": str(out)}, opts)
    (out / "held_out_eval.json").write_text(json.dumps(report, indent=1))
    return {k: v for k, v in report.items() if k != "per_request"}


def render(figures: dict) -> str:
    t = figures["training"]
    lines = [(f"distilled {figures['base']} -> {figures.get('out', '')}: {figures['train_requests']} requests "
              f"({figures['examples']} examples), {t['steps']} steps in {t['seconds']:.0f} s on "
              f"{figures['threads']} threads; loss {t['first_loss']:.3f} -> {t['last_loss']:.3f}")]
    if "held_out" in figures:
        from cachegate.distill.compare import table
        lines.append(table(figures["held_out"]))
    return "\n".join(lines)
