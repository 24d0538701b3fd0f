"""`cachegate drill false-hits`: the request stream changes under the gateway, and verification brings the
false-hit rate back under its target within the run.

A gateway with a deliberately loose semantic decision (cosine 0.74) serves CLINC150 questions of some
intents (stored, then asked again in other words); halfway, questions of their sibling intents arrive
(same domain, never stored: near misses that the loose decision serves wrongly). Every semantic hit is
re-asked in the background (shadow checks; the stand-in backend answers each question with its intent's
canned answer, so a wrong hit shows), and the controller tightens the namespace. The report puts the
rate the gateway measured beside the true rate the labels give, per window, with the decision's setting.
"""
from __future__ import annotations

import argparse
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path

from cachegate.backends.base import BackendRequest, Chunk, ModelInfo, Usage

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "intents"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", default=str(DATA), help="folder with clinc150.json and clinc150_domains.json")
    p.add_argument("--domains", default="banking,credit_cards,travel,utility", help="CLINC domains to draw from")
    p.add_argument("--stored-per-intent", type=int, default=5)
    p.add_argument("--lookups", type=int, default=2000, help="questions asked after the warm-up")
    p.add_argument("--window", type=int, default=100, help="lookups per reported window")
    p.add_argument("--threshold", type=float, default=0.74, help="the loose cosine threshold to start from")
    p.add_argument("--target", type=float, default=0.02)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="drill-out", help="folder for the JSON and the PNG")
    p.add_argument("--json", action="store_true")


class IntentBackend:
    """Answers each question with its intent's canned answer (a stand-in: the drill tests the gateway)."""

    def __init__(self, intents: dict[str, str]) -> None:
        self.info = ModelInfo("drill", "small", 4096)
        self.intents = intents
        self.calls = 0

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def generate(self, request: BackendRequest) -> AsyncIterator[Chunk]:
        self.calls += 1
        yield Chunk(canned(self.intents[request.messages[-1]["content"]]), "stop", Usage(12, 20))


def canned(intent: str) -> str:
    rng = random.Random(intent)
    words = ["alpha", "bravo", "delta", "echo", "kilo", "lima", "oscar", "papa", "sierra", "tango", "victor", "zulu"]
    return f"Answer {intent}: " + " ".join(rng.choice(words) for _ in range(12))


def streams(args: argparse.Namespace) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(warm-up, first half, second half) as (question, intent): the first half asks stored intents in other
    words; the second mixes in their never-stored sibling intents."""
    data = json.loads((Path(args.data) / "clinc150.json").read_text())
    domains = json.loads((Path(args.data) / "clinc150_domains.json").read_text())
    rng = random.Random(args.seed)
    by_intent: dict[str, list[str]] = {}
    for text, intent in data["train"] + data["val"]:
        by_intent.setdefault(intent, []).append(text)
    stored, siblings = [], []
    for domain in args.domains.split(","):
        intents = sorted(domains[domain])
        rng.shuffle(intents)
        stored += intents[: len(intents) // 2]
        siblings += intents[len(intents) // 2:]
    warm = [(q, i) for i in stored for q in by_intent[i][: args.stored_per_intent]]
    asked = [(q, i) for i in stored for q in by_intent[i][args.stored_per_intent:]]
    near = [(q, i) for i in siblings for q in by_intent[i]]
    rng.shuffle(asked)
    rng.shuffle(near)
    half = args.lookups // 2
    second = asked[half: half + half // 2] + near[: half - half // 2]
    rng.shuffle(second)
    return warm, asked[:half], second


def run(args: argparse.Namespace) -> int:
    result = drill(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "drill_false_hits.json").write_text(json.dumps(result, indent=1))
    plot(result, out / "drill_false_hits.png")
    print(json.dumps(result) if args.json else table(result))
    return 0


def drill(args: argparse.Namespace) -> dict:
    from fastapi.testclient import TestClient
    from tqdm import tqdm

    from cachegate.api.app import create_app
    from cachegate.settings import load_settings
    warm, first, second = streams(args)
    backend = IntentBackend(dict(warm + first + second))
    settings = load_settings(env={}, overrides={"models": [{"name": "drill"}], "cache": {
        "exact": {"enabled": False}, "semantic": {"policy": "cosine", "threshold": args.threshold, "verify_rate": 1.0,
                                                  "verify": {"per_minute": 100_000, "target": args.target,
                                                             "answer_similarity": 0.95}}}})
    rows, window, judged = [], [], (0, 0)
    with TestClient(create_app(settings, backends={"drill": backend})) as client:
        verification = client.app.state.services.verification
        for question, _ in tqdm(warm, desc="warm-up", unit="q"):
            ask(client, question)
        stream = [(q, i, "first") for q, i in first] + [(q, i, "second") for q, i in second]
        for n, (question, intent, half) in enumerate(tqdm(stream, desc="drill", unit="q"), 1):
            r = ask(client, question)
            hit = r.headers["x-cachegate-cache"] == "hit-semantic"
            wrong = hit and not r.json()["choices"][0]["message"]["content"].startswith(f"Answer {intent}:")
            window.append((hit, wrong, half))
            if n % args.window == 0 or n == len(stream):
                client.portal.call(verification.shadow.drain)
                view = verification.view()
                rows.append(summary(n, window, view, judged, args.target))
                judged, window = totals(view), []
    return {"threshold_start": args.threshold, "target": args.target, "warm_entries": len(warm),
            "lookups": len(stream), "shift_at": len(first), "windows": rows,
            "changes": verification.view()["changes"], "backend_calls": backend.calls,
            "shadow": dict(verification.shadow.counts)}


def ask(client, question: str):
    return client.post("/v1/chat/completions", json={"model": "drill", "temperature": 0,
                                                     "messages": [{"role": "user", "content": question}]})


def totals(view: dict) -> tuple[int, int]:
    ns = view["namespaces"].get("default", {})
    return ns.get("good", 0), ns.get("bad", 0)


def summary(n: int, window: list[tuple[bool, bool, str]], view: dict, before: tuple[int, int], target: float) -> dict:
    """One window: the true rate (labels), the rate the gateway's checks found in it, and the estimate the
    controller holds (since the decision last changed) with its upper bound."""
    hits = sum(h for h, _, _ in window)
    wrong = sum(w for _, w, _ in window)
    good, bad = (now - then for now, then in zip(totals(view), before))
    ns = view["namespaces"].get("default", {})
    return {"after_lookups": n, "half": window[-1][2], "hit_rate": round(hits / len(window), 4),
            "true_false_hit_rate": round(wrong / hits, 4) if hits else 0.0,
            "checked_false_hit_rate": round(bad / (good + bad), 4) if good + bad else 0.0,
            "estimate_since_change": ns.get("false_hit_rate", 0.0), "upper_bound": ns.get("upper_bound", 1.0),
            "threshold": ns.get("threshold"), "target": target}


def table(r: dict) -> str:
    lines = [f"false-hit drill: cosine {r['threshold_start']} to start, target {r['target']}, "
             f"{r['warm_entries']} entries, near misses from lookup {r['shift_at']}",
             f"{'lookups':>8} {'half':>7} {'hit rate':>9} {'true FHR':>9} {'checked':>8} {'estimate':>9} {'upper':>7}"
             f" {'threshold':>10}"]
    for w in r["windows"]:
        lines.append(f"{w['after_lookups']:>8} {w['half']:>7} {w['hit_rate']:>9.3f} {w['true_false_hit_rate']:>9.3f}"
                     f" {w['checked_false_hit_rate']:>8.3f} {w['estimate_since_change']:>9.3f} {w['upper_bound']:>7.3f}"
                     f" {w['threshold']!s:>10}")
    lines.append("true FHR: served the wrong intent (labels); checked: what shadow checks found in the window; "
                 "estimate/upper: what the controller holds since its last change")
    lines.append(f"changes: {len(r['changes'])}; shadow checks {r['shadow']}")
    return "\n".join(lines)


def plot(r: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    x = [w["after_lookups"] for w in r["windows"]]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.plot(x, [w["true_false_hit_rate"] for w in r["windows"]], label="true false-hit rate (labels)")
    ax.plot(x, [w["checked_false_hit_rate"] for w in r["windows"]], label="measured by shadow checks")
    ax.axhline(r["target"], color="grey", linestyle="--", label="target")
    ax.axvline(r["shift_at"], color="red", linestyle=":", label="near misses arrive")
    twin = ax.twinx()
    twin.step(x, [w["threshold"] or r["threshold_start"] for w in r["windows"]], color="purple", where="post",
              label="cosine threshold")
    twin.set_ylabel("threshold")
    ax.set_xlabel("lookups")
    ax.set_ylabel("false-hit rate")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
