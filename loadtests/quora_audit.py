"""One reader's audit of `qqp_dev` labels, and what it says about the lowest false-hit rate they allow.

`loadtests/data/qqp_dev_audit.json` holds verdicts (duplicate, different, unclear) on 100 pairs labelled
non-duplicate, drawn from the pairs the shipped matcher's tuned cosine ranks highest down to 30% of the
duplicates found: the pairs a cache serving at that hit rate is charged with as false hits. From them:
- the share of those "false hits" that one answer serves in fact (low: duplicates only; high: unclear too);
- the false-hit rate that ranking would show against the audited labels;
- the noise floor: the share of true duplicates among those top pairs that the labels call non-duplicates. A
  model that found exactly the true duplicates would show that false-hit rate against these labels.
The audit is one reader's, on a sample; its figures are estimates with that sample's error (about ±9 points on
a share of 100).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

AUDIT = Path(__file__).with_name("data") / "qqp_dev_audit.json"
HIT_RATE = 0.30


def pair_hash(a: str, b: str) -> str:
    return hashlib.sha256(f"{a}\x00{b}".encode()).hexdigest()[:12]


def read_audit(pairs, path: Path = AUDIT) -> dict[int, str]:
    """Row -> verdict, checked against the pairs it was taken on (a changed data file fails loudly)."""
    rows = json.loads(path.read_text())["pairs"]
    changed = [r["row"] for r in rows if r["row"] >= len(pairs) or
               pair_hash(pairs[r["row"]].a, pairs[r["row"]].b) != r["pair_sha256"]]
    if changed:
        raise ValueError(f"{path.name}: rows {changed[:5]} are not the pairs audited (another qqp_dev.csv?)")
    return {r["row"]: r["verdict"] for r in rows}


def summary(verdicts: dict[int, str], scores: np.ndarray, labels: np.ndarray) -> dict:
    """The audit applied to the pairs `scores` ranks best, down to HIT_RATE of the labelled duplicates (only the
    audited pairs among them count: a retrained matcher ranks a little differently)."""
    order = np.argsort(-scores, kind="stable")
    k = int(np.searchsorted(np.cumsum(labels[order]), HIT_RATE * labels.sum())) + 1
    top = order[:k]
    found, charged = int(labels[top].sum()), int(k - labels[top].sum())
    inside = [verdicts[int(i)] for i in top if int(i) in verdicts and not labels[i]]
    counts = {v: inside.count(v) for v in ("duplicate", "unclear", "different")}
    out = {"served": k, "labelled_duplicates": found, "labelled_false_hits": charged,
           "labelled_false_hit_rate": round(charged / k, 4), "audited_in_served": len(inside), "verdicts": counts}
    for reading, share in (("duplicates_only", counts["duplicate"]),
                           ("unclear_as_duplicates", counts["duplicate"] + counts["unclear"])):
        mislabelled = charged * share / max(1, len(inside))
        out[reading] = {"audited_false_hit_rate": round((charged - mislabelled) / k, 4),
                        "noise_floor": round(mislabelled / (found + mislabelled), 4)}
    return out
