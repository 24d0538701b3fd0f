"""The matcher's card: what it was trained on, with what seed, how long it took, and its held-apart figures."""
from __future__ import annotations

from pathlib import Path


def write_card(folder: Path, manifest: dict) -> None:
    fitted = manifest["fitted"]
    share = manifest["settings"].get("absent_share", 0.0)
    seconds = ", ".join(f"{k} {v:.0f} s" for k, v in manifest["seconds"].items() if k != "total")
    verifier = ("a verifier (the encoder's first layers fine-tuned as a cross-encoder, shipped as int8 deltas) "
                "gates the served entry's logit; " if manifest["verifier"] else "")
    lines = [
        "# cachegate semantic matcher",
        "",
        "Applied at load to the packaged all-MiniLM-L6-v2: a retrieval projection after the frozen encoder; an entry",
        "is served when its tuned cosine passes the cut and beats the closest entry of another answer by the cut's",
        "margin (a number or name that another retrieved question holding the same answer differs in does not veto;",
        f"`lift_slots`); {verifier}the cut per target false-hit rate is fitted on lookups of domains the projection",
        f"{'and the verifier ' if manifest['verifier'] else ''}never saw (cross-fitting by folds of domains).",
        "",
        f"- rebuilt by: `{manifest['command']}`",
        f"- data: {manifest['data']}",
        f"- folds (held out together when cross-fitting): {'; '.join(', '.join(f) for f in manifest['folds'])}",
        f"- left out entirely: {', '.join(manifest['left_out']) or 'nothing'}",
        (f"- the cut: the false-hit rate of the cross-fitted lookups at most the target at one-sided confidence "
         f"{fitted['confidence']:g}" + (" (the point estimate)" if fitted['confidence'] <= 0.5 else "")
         + (f", {share:.0%} of them questions whose answer is not cached" if share
            else ", every one of them a question whose answer is cached")),
        (f"- seed {manifest['settings']['seed']}; {manifest['seconds']['total']:.0f} s on {manifest['cpus']} CPU cores "
         f"({seconds})"),
        f"- files: {', '.join(f'{k} {v / 1e6:.2f} MB' for k, v in manifest['file_bytes'].items())}",
        "",
        f"## Held-apart figures at the default target ({fitted['target_false_hit_rate']:.0%} false hits)",
        "",
        "| set | lookups | served | served rate | hit rate | false-hit rate |",
        "|---|---|---|---|---|---|",
    ]
    for name, f in fitted["sets"].items():
        lines.append(f"| {name} | {f['lookups']} | {f['served']} | {f['served_rate']:.4f} | {f['hit_rate']:.4f} | "
                     f"{f['false_hit_rate']:.4f} |")
    scorer = "a projection and a verifier" if manifest["verifier"] else "a projection"
    lines += ["", "The unseen-domain and out-of-scope rows are the cross-fitted lookups the cut was fitted on (each",
              f"scored by {scorer} trained without its domains); Quora pairs are held apart from training; the",
              "seen-domain row uses the shipped projection on val questions of domains it trained on. The",
              "answer-not-cached row is the unseen-domain questions again, each with its own intent's entries taken",
              "out of the cache: every hit there is wrong, and a live cache is asked such questions more than any.", ""]
    (folder / "CARD.md").write_text("\n".join(lines))
