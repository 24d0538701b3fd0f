"""The matcher's card: what it was trained on, with what seed, how long it took, and its held-apart figures."""
from __future__ import annotations

from pathlib import Path


def write_card(folder: Path, manifest: dict) -> None:
    fitted = manifest["fitted"]
    lines = [
        "# cachegate semantic matcher",
        "",
        "Applied at load to the packaged all-MiniLM-L6-v2: a retrieval projection after the frozen encoder, and a",
        (f"verifier (the encoder's first {manifest['settings']['layers']} layers fine-tuned, shipped as int8 deltas,"
         " and a one-logit head) whose evidence a logistic decision cuts at the"),
        "namespace's target false-hit rate.",
        "",
        f"- rebuilt by: `{manifest['command']}`",
        f"- data: {manifest['data']}",
        f"- training domains: {', '.join(manifest['training_domains'])}",
        f"- calibration domains (never trained on): {', '.join(manifest['calibration_domains'])}",
        f"- left out entirely: {', '.join(manifest['left_out']) or 'nothing'}",
        (f"- seed {manifest['settings']['seed']}; {manifest['seconds']['total']:.0f} s on {manifest['cpus']} CPU cores "
         f"(projection {manifest['seconds']['projection']:.0f} s, verifier {manifest['seconds']['verifier']:.0f} s, "
         f"calibration {manifest['seconds']['calibration']:.0f} s)"),
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
    lines += ["", "Calibration sets are scored out of fold (the decision never saw the lookup it scores);",
              "`seen domains (val)` uses training domains' held-apart val questions and the final decision.", ""]
    (folder / "CARD.md").write_text("\n".join(lines))
