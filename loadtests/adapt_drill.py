"""`python -m loadtests.adapt_drill [--out adapt-out]`: a deployment's verified labels adapt the matcher.

A matcher trained without CLINC's banking and credit-card domains meets them as a new customer's traffic would:
five questions per intent cached, the domains' val questions looked up through the real tier, and every hit
checked against its intent as shadow checks would (the labels the gateway writes to `verify.labels_path`). Then
`cachegate train matcher --from-verified` retrains with those labels, and both matchers are measured on the
domains' test questions (with CLINC's out-of-scope test questions), before and after, beside plain cosine.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from cachegate.cache.semantic.embedder import Embedder
from cachegate.commands import evaluate
from cachegate.evaluation import lookups
from cachegate.evaluation.intents import read_intents, warm_set
from cachegate.matcher_train.data import DEFAULT_DATA
from cachegate.verified.labels import Label

DOMAINS = "banking,credit_cards"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m loadtests.adapt_drill", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--out", default="adapt-out")
    p.add_argument("--quick", action="store_true", help="train on the quick slice (a smoke run, not a measure)")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    intents = Path(args.data) / "intents" / "clinc150.json"
    common = ["--leave-out", DOMAINS, "--embedding-cache", str(out / "embeddings"), "--no-progress"]
    common += ["--quick"] if args.quick else []
    cli("train", "matcher", "--out", str(out / "before"), *common)
    labels = label_hits(out / "before", intents, out / "labels.jsonl")
    cli("train", "matcher", "--out", str(out / "after"), "--from-verified", str(out / "labels.jsonl"), *common)
    report = {"labels": labels, "test": {name: measure(intents, policy, out) for name, policy in
                                         (("before", str(out / "before")), ("after", str(out / "after")),
                                          ("cosine 0.80", "cosine"))}}
    (out / "adapt_drill.json").write_text(json.dumps(report, indent=1) + "\n")
    print(table(report))
    return 0


def cli(*words: str) -> str:
    done = subprocess.run([sys.executable, "-m", "cachegate", *words], capture_output=True, text=True,
                          env=os.environ | {"HF_HUB_OFFLINE": "1"})
    if done.returncode:
        raise SystemExit(f"cachegate {' '.join(words)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def label_hits(matcher: Path, intents: Path, path: Path) -> dict:
    """Every hit on the domains' val questions, labelled right or wrong by its intent (a shadow check each)."""
    data = json.loads(intents.read_text())
    domain_file = intents.parent / "clinc150_domains.json"
    keep = {i for d in DOMAINS.split(",") for i in json.loads(domain_file.read_text())[d]}
    val = [(t.strip(), i) for t, i in data["val"] if i in keep]
    train = read_intents(intents, DOMAINS.split(","), domain_file).train
    tier = evaluate.make_tier(argparse.Namespace(policy=str(matcher), threshold=0.9), Embedder())

    async def run() -> list[Label]:
        for question, intent in warm_set(train, 5):
            await lookups.store(tier, question, intent)
        out = []
        for question, intent in val:
            found = await tier.lookup("chat", lookups.request_for(question))
            if found and found.hit:
                entry = found.hit.entry
                out.append(Label("default", "default", question, entry.query, entry.answer.text == intent, "shadow"))
        return out
    labels = asyncio.run(run())
    path.write_text("".join(json.dumps(asdict(label)) + "\n" for label in labels))
    return {"lookups": len(val), "labels": len(labels), "wrong": sum(not label.good for label in labels)}


def measure(intents: Path, policy: str, out: Path) -> dict:
    words = ["eval", "semantic", "--intents", str(intents), "--domains", DOMAINS, "--policy", policy,
             "--embedding-cache", str(out / "embeddings"), "--json"]
    words += ["--threshold", "0.8"] if policy == "cosine" else []
    return json.loads(cli(*words).strip().splitlines()[-1])["intents"]


def table(report: dict) -> str:
    lab = report["labels"]
    lines = [f"adaptation drill: {lab['labels']} verified hits on {lab['lookups']} val lookups ({lab['wrong']} wrong)",
             f"{'matcher':<12} {'in-scope served':>16} {'wrong of served':>16} {'oos served':>11}"]
    for name, r in report["test"].items():
        inside, oos = r["in_scope"], r["out_of_scope"]
        lines.append(f"{name:<12} {inside['hit_rate']:>16.3f} {inside['false_hit_rate']:>16.4f} "
                     f"{oos['hit_rate']:>11.3f}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
