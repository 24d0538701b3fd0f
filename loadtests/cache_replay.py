"""`python -m loadtests.cache_replay [--sessions 1500] [--out replay-out]`: the semantic tier over hours of
customer-service traffic, replayed in a minute.

A load test runs the real models for minutes, so its cache never gets warm: some forty semantic hits, too few to
read a false-hit rate from. This replays the workload's opening questions (a follow-up is only ever served within
its own conversation) through a real tier: a question asked word for word before is the exact tier's and is
skipped; every other one is looked up and, on a miss, stored with an answer. Two backends are replayed:
`distinct` answers every stored question with an answer of its own (a short label, so no two are ever taken for
one: generated answers that never agree, as a small model's do, make a cached paraphrase a rival) and `reference`
answers every question of an intent with the intent's reference text (one answer per intent; the tier may also
take two intents' near-identical texts for one). A hit is right when the entry it served was asked for the same
intent. Per window of lookups it reports the share served of those whose intent was asked before (what a semantic
tier could serve) and the share of hits that were wrong; a table, JSON and a PNG. `--labels FILE` also writes
every hit as a verified label (what a shadow check that never errs would say), the input of
`cachegate train matcher --from-verified`.

`--verify-rate R` runs the production loop that holds a namespace to its target (`cachegate.verified`): a share R
of the hits is checked (a shadow re-ask that never errs: right when the served entry's intent is the question's)
and the verdict goes to the gateway's own `TargetController`, which tightens the tier's decision when the checks
say the false-hit rate passes the target. The windows then show what the loop buys on a cache that is still
filling, where a cut fitted with every intent cached lets the closest wrong intent through.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

from loadtests.workloads.customer_service import CustomerService

ANSWERS = ("distinct", "reference")


@dataclass
class Window:
    """One window of lookups (cumulative counts are summed from the windows)."""
    lookups: int = 0
    askable: int = 0      # lookups whose intent was asked before: the tier could serve them
    served: int = 0
    wrong: int = 0        # served an entry asked for another intent
    entries: int = 0      # entries in the tier at the window's end
    checked: int = 0      # hits shadow-checked (--verify-rate)
    wrong_unaskable: int = 0    # wrong hits of lookups that were not askable: no answer of theirs was cached

    def add(self, other: Window) -> Window:
        return Window(self.lookups + other.lookups, self.askable + other.askable, self.served + other.served,
                      self.wrong + other.wrong, other.entries, self.checked + other.checked,
                      self.wrong_unaskable + other.wrong_unaskable)

    def rates(self) -> dict:
        """Right hits of the askable lookups (the tier's recall), and wrong of the served (its false-hit rate);
        None where nothing was askable or served."""
        return {"right_of_askable": round((self.served - self.wrong) / self.askable, 4) if self.askable else None,
                "false_hit_rate": round(self.wrong / self.served, 4) if self.served else None}


@dataclass
class ShadowChecks:
    """A seeded share of the hits checked, each verdict recorded with the gateway's target controller (which
    replaces the tier's policy with a stricter one when the checks say so)."""
    controller: object                     # cachegate.verified.controller.TargetController
    rate: float
    seed: int = 0
    namespace: str = "default"
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def maybe(self, right: bool) -> bool:
        """Check this hit (at the rate); True when it was checked."""
        if self.rng.random() >= self.rate:
            return False
        self.controller.record(self.namespace, right, "shadow")
        return True


def opening_questions(sessions: int, seed: int) -> list[tuple[str, str]]:
    """(question, intent) of each session's first turn, in arrival order."""
    work, rng = CustomerService(seed), random.Random(seed)
    return [(s.turns[0].text, s.turns[0].label) for s in (work.session(rng) for _ in range(sessions))]


async def replay(tier, asked: list[tuple[str, str]], answers: str, window: int, reference: dict[str, str],
                 hits: list[dict] | None = None, checks: ShadowChecks | None = None) -> list[Window]:
    """Each question looked up through the tier in order; a miss stored with its answer. Every hit is appended
    to `hits` (asked, its intent, the question that stored what was served, that one's intent); with `checks`, a
    share of the hits is verified and may tighten the tier's decision for the lookups after it."""
    from cachegate.evaluation.lookups import served, store
    seen: set[str] = set()
    intents: set[str] = set()
    asked_for: dict[str, tuple[str, str]] = {}     # answer text -> (question, intent) of the miss that stored it
    out, current = [], Window()
    for question, intent in asked:
        if question in seen:
            continue
        current.lookups += 1
        askable = intent in intents
        current.askable += askable
        answer = await served(tier, question)
        if answer is not None:
            current.served += 1
            by_question, by_intent = asked_for[answer]
            current.wrong += by_intent != intent
            current.wrong_unaskable += by_intent != intent and not askable
            current.checked += checks is not None and checks.maybe(by_intent == intent)
            if hits is not None:
                hits.append({"asked": question, "intent": intent, "served_for": by_question,
                             "served_intent": by_intent})
        else:
            text = reference[intent] if answers == "reference" else f"answer {len(asked_for)}"   # a label: never merged
            await store(tier, question, text)
            asked_for.setdefault(text, (question, intent))
            current.entries += 1
        seen.add(question)
        intents.add(intent)
        if current.lookups == window:
            out.append(current)
            current = Window(entries=current.entries)
    if current.lookups:
        out.append(current)
    return out


def make_tier(embedder, policy: str, threshold: float | None = None):
    from cachegate.build_parts import build_semantic_store, build_semantic_tier
    from cachegate.settings import load_settings
    semantic = {"policy": policy, "max_entries": 10 ** 7} | ({} if threshold is None else {"threshold": threshold})
    settings = load_settings(env={}, overrides={"cache": {"semantic": semantic}})
    return build_semantic_tier(settings, build_semantic_store(settings), embedder)


def write_labels(path: Path, hits: list[dict]) -> None:
    from cachegate.verified.labels import Label
    with path.open("w", encoding="utf-8") as f:
        for hit in hits:
            label = Label("default", "default", hit["asked"], hit["served_for"], hit["intent"] == hit["served_intent"],
                          "replay")
            f.write(json.dumps(asdict(label), ensure_ascii=False) + "\n")


def make_checks(tier, rate: float, seed: int) -> ShadowChecks | None:
    """Shadow checks at `rate` held to the default 2% target by the gateway's controller (None at rate 0)."""
    from cachegate.verified.controller import TargetController
    return ShadowChecks(TargetController(tier, {}), rate, seed) if rate > 0 else None


def run(sessions: int, seed: int, window: int, modes: tuple[str, ...], policy: str = "packaged",
        threshold: float | None = None, verify_rate: float = 0.0) -> dict:
    from cachegate.cache.semantic.embedder import PACKAGED, Embedder
    asked = opening_questions(sessions, seed)
    reference = {i.id: i.answer for i in CustomerService(seed).intents}
    embedder = Embedder(PACKAGED, cache_size=10 ** 6)
    report: dict = {"sessions": sessions, "seed": seed, "window": window, "policy": policy,
                    "threshold": threshold, "verify_rate": verify_rate, "answers": {}}
    try:
        for mode in modes:
            hits: list[dict] = []
            tier = make_tier(embedder, policy, threshold)
            checks = make_checks(tier, verify_rate, seed)
            windows = asyncio.run(replay(tier, asked, mode, window, reference, hits, checks))
            total = Window()
            for w in windows:
                total = total.add(w)
            report["answers"][mode] = {"total": asdict(total) | total.rates(),
                                       "windows": [asdict(w) | w.rates() for w in windows],
                                       "hits": hits}
            if checks is not None:
                report["answers"][mode]["changes"] = checks.controller.view()["changes"]
    finally:
        embedder.close()
    return report


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.1%}"


def table(report: dict) -> str:
    checking = f", {report['verify_rate']:.0%} of hits shadow-checked" if report.get("verify_rate") else ""
    lines = [(f"customer-service opening questions, {report['sessions']} sessions (seed {report['seed']}), "
              f"policy {report['policy']} {report['threshold'] or ''}{checking}, windows of {report['window']} "
              "lookups"),
             "answers     lookups  askable  served  wrong (not askable)  right of askable  false-hit rate  entries"]
    for mode, r in report["answers"].items():
        t = r["total"]
        lines.append(f"{mode:<10} {t['lookups']:>8} {t['askable']:>8} {t['served']:>7} "
                     f"{t['wrong']:>6} {'(' + str(t['wrong_unaskable']) + ')':>12} "
                     f"{_pct(t['right_of_askable']):>17} {_pct(t['false_hit_rate']):>15} {t['entries']:>8}")
        lines += [f"  window {k + 1}: right {_pct(w['right_of_askable'])} of askable, {_pct(w['false_hit_rate'])} "
                  f"wrong ({w['wrong']}/{w['served']}), {w['entries']} entries"
                  + (f", {w['checked']} checked" if checking else "") for k, w in enumerate(r["windows"])]
        lines += [f"  decision changed: {c['knob']} {c['before']:g} -> {c['after']:g} ({c['why']})"
                  for c in r.get("changes", [])]
    return "\n".join(lines)


def plot(report: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    for mode, r in report["answers"].items():
        ends = [report["window"] * (k + 1) for k in range(len(r["windows"]))]
        for key, style, label in (("right_of_askable", "-o", "right of askable"),
                                  ("false_hit_rate", "--x", "wrong of served")):
            points = [(end, 100 * w[key]) for end, w in zip(ends, r["windows"]) if w[key] is not None]
            if points:
                ax.plot(*zip(*points), style, label=f"{mode}: {label}")
    ax.set_xlabel("lookups replayed")
    ax.set_ylabel("% per window")
    ax.set_title("semantic tier as the cache fills (customer-service)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m loadtests.cache_replay", description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=1500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--window", type=int, default=250, help="lookups per reported window")
    p.add_argument("--answers", choices=(*ANSWERS, "both"), default="both")
    p.add_argument("--policy", default="packaged", help="'packaged', 'cosine' or a matcher folder / policy file")
    p.add_argument("--threshold", type=float, help="plain cosine's cut, with --policy cosine")
    p.add_argument("--labels", metavar="FILE", help="write the first answers mode's hits as verified labels")
    p.add_argument("--verify-rate", type=float, default=0.0,
                   help="share of hits shadow-checked, the verdicts held to the 2%% target by the gateway's controller")
    p.add_argument("--out", default="replay-out")
    args = p.parse_args(argv)
    if not 0.0 <= args.verify_rate <= 1.0:
        p.error(f"--verify-rate is a share in [0, 1], not {args.verify_rate}")
    modes = ANSWERS if args.answers == "both" else (args.answers,)
    report = run(args.sessions, args.seed, args.window, modes, args.policy, args.threshold, args.verify_rate)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cache_replay.json").write_text(json.dumps(report, indent=1))
    plot(report, out / "cache_replay.png")
    if args.labels:
        write_labels(Path(args.labels), report["answers"][modes[0]]["hits"])
    print(table(report))
    print(f"wrote {out / 'cache_replay.json'} and {out / 'cache_replay.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
