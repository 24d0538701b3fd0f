"""`python -m loadtests.action_pairs --matchers A,B [--cuts 0.70:0.10,..] [--seeds 0,1,2]`: matchers compared on the
customer-service replay at the same cuts, so a better ranking is told from a cut fitted elsewhere.

A matcher's fitted cut moves from run to run along a flat stretch of its cross-fitted lookups (the seeds of
`cachegate train matcher` land anywhere from cosine 0.58 to 0.73), so two matchers replayed at their own fitted
cuts compare two operating points, not two rankings. This replays `loadtests.cache_replay` (distinct answers,
the seeds summed) for each matcher at each fixed (tuned cosine, margin) cut and at its fitted one, and reports
right of askable beside wrong of served for every point; a table, JSON and a PNG of the two curves. Built for
the minimal pairs on the action verb: `cachegate train matcher --no-action-pairs --out DIR` trains the matcher
without them, to compare with the packaged one.
"""
from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from loadtests import cache_replay

CUTS = "0.66:0.08,0.70:0.10,0.73:0.11,0.68:0.15,0.75:0.15,0.80:0.18"


def with_cut(folder: Path, cut: tuple[float, float] | None, into: Path) -> Path:
    """A copy of the matcher in `folder` with its default target's cosine and margin set to `cut` (None: as is)."""
    shutil.copytree(folder, into)
    if cut is not None:
        path = into / "matcher.json"
        matcher = json.loads(path.read_text())
        decision = matcher["decision"]
        decision["thresholds"][f"{decision['target_false_hit_rate']:g}"].update(cosine=cut[0], margin=cut[1])
        path.write_text(json.dumps(matcher, indent=1))
    return into


def fitted_cut(folder: Path) -> tuple[float, float]:
    decision = json.loads((folder / "matcher.json").read_text())["decision"]
    cut = decision["thresholds"][f"{decision['target_false_hit_rate']:g}"]
    return float(cut["cosine"]), float(cut["margin"])


def point(folder: Path, seeds: list[int], sessions: int) -> dict:
    """The replay's distinct-answers totals over the seeds."""
    served = wrong = askable = 0
    for seed in seeds:
        total = cache_replay.run(sessions, seed, 10 ** 6, ("distinct",), str(folder))["answers"]["distinct"]["total"]
        served, wrong, askable = served + total["served"], wrong + total["wrong"], askable + total["askable"]
    return {"served": served, "wrong": wrong, "askable": askable,
            "right_of_askable": round((served - wrong) / askable, 4) if askable else 0.0,
            "false_hit_rate": round(wrong / served, 4) if served else 0.0}


def study(matchers: list[Path], cuts: list[tuple[float, float]], seeds: list[int], sessions: int) -> dict:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for m, folder in enumerate(matchers):
            for c, cut in enumerate([None, *cuts]):
                copy = with_cut(folder, cut, Path(scratch) / f"{m}-{c}")
                used = cut or fitted_cut(folder)
                rows.append({"matcher": str(folder), "cut": list(used), "fitted": cut is None}
                            | point(copy, seeds, sessions))
                print(line(rows[-1]), flush=True)
    return {"seeds": seeds, "sessions": sessions, "rows": rows}


def line(r: dict) -> str:
    fitted = " (fitted)" if r["fitted"] else ""
    return (f"{r['matcher']:<40} {r['cut'][0]:.2f} / {r['cut'][1]:.2f}{fitted:<9} served {r['served']:>4} "
            f"wrong {r['wrong']:>4}  right {r['right_of_askable']:6.1%} of askable  wrong {r['false_hit_rate']:6.1%}")


def plot(report: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name in dict.fromkeys(r["matcher"] for r in report["rows"]):
        rows = sorted((r for r in report["rows"] if r["matcher"] == name and not r["fitted"]),
                      key=lambda r: r["false_hit_rate"])
        shown = ax.plot([100 * r["false_hit_rate"] for r in rows], [100 * r["right_of_askable"] for r in rows], "-o",
                        label=Path(name).name or name)
        fitted = next(r for r in report["rows"] if r["matcher"] == name and r["fitted"])
        ax.plot(100 * fitted["false_hit_rate"], 100 * fitted["right_of_askable"], "*", ms=14,
                color=shown[0].get_color(), label=f"{Path(name).name or name}: its fitted cut")
    ax.set_xlabel("wrong of served (%)")
    ax.set_ylabel("right of askable (%)")
    ax.set_title(f"customer-service replay at the same cuts (seeds {', '.join(map(str, report['seeds']))})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse_cuts(text: str) -> list[tuple[float, float]]:
    return [(float(c), float(m)) for c, m in (pair.split(":") for pair in text.split(",") if pair)]


def main(argv: list[str] | None = None) -> int:
    from cachegate.cache.semantic.matcher_files import packaged_folder
    p = argparse.ArgumentParser(prog="python -m loadtests.action_pairs", description=__doc__.split("\n\n")[0])
    p.add_argument("--matchers", required=True, help="matcher folders, comma-separated ('packaged' for the shipped)")
    p.add_argument("--cuts", default=CUTS, help="tuned cosine:margin pairs, comma-separated")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--sessions", type=int, default=1500)
    p.add_argument("--out", default="action-pairs-out")
    args = p.parse_args(argv)
    matchers = [packaged_folder() if m == "packaged" else Path(m) for m in args.matchers.split(",")]
    missing = [str(m) for m in matchers if not (m / "matcher.json").exists()]
    if missing:
        p.error(f"no matcher.json in {', '.join(missing)}")
    report = study(matchers, parse_cuts(args.cuts), [int(s) for s in args.seeds.split(",")], args.sessions)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "action_pairs.json").write_text(json.dumps(report, indent=1))
    plot(report, out / "action_pairs.png")
    print(f"wrote {out / 'action_pairs.json'} and {out / 'action_pairs.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
