"""`cachegate train matcher --from-verified`: labels become training rows (a right hit pulls its pair together, a
wrong one pushes the entry away), and they tighten the cut only when the hits it serves are wrong too often."""
from __future__ import annotations

import json

import pytest

from cachegate.matcher_train import verified
from cachegate.verified.labels import Label
from policies.matcher import Cut


def label(q: str, e: str, good: bool) -> Label:
    return Label("acme", "default", q, e, good, "shadow")


def test_right_hits_are_positives_and_wrong_ones_hard_negatives():
    rows = verified.triplets([label("where is my card", "card not arrived", True),
                              label("where is my card", "card stolen", False)], seed=0)
    assert len(rows) == 2 * verified.REPEAT
    good = [r for r in rows if r.positive == "card not arrived"]
    bad = [r for r in rows if r.negative == "card stolen" and r.positive == r.anchor]
    assert good and bad and all(r.negative == "card stolen" for r in good)   # the wrong entry is its hard negative


def cosine_table(pairs: dict):
    return lambda a, b: pairs[(a, b)]


def test_the_cut_tightens_past_the_wrong_hits_and_never_loosens():
    labels = [label(f"q{k}", f"e{k}", True) for k in range(60)] + [label(f"w{k}", f"x{k}", False) for k in range(6)]
    cos = {(f"q{k}", f"e{k}"): 0.9 for k in range(60)} | {(f"w{k}", f"x{k}"): 0.75 for k in range(6)}
    cut = Cut(0.7, 0.1, 1.01)
    tight = verified.tightened(cut, labels, cosine_table(cos), 0.02)
    assert 0.75 < tight.cosine <= 0.9 and tight.margin == cut.margin and tight.lone == 1.01
    clean = [label(f"q{k}", f"e{k}", True) for k in range(60)]
    assert verified.tightened(cut, clean, cosine_table(cos), 0.02) == cut        # labels never loosen it
    few = labels[:5] + labels[-2:]
    assert verified.tightened(cut, few, cosine_table(cos), 0.02) == cut          # too few labels to judge


def test_a_file_without_labels_is_refused(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text("not json\n" + json.dumps({"question": "", "entry_question": "x"}) + "\n")
    with pytest.raises(SystemExit):
        verified.load(str(path))


def test_a_curated_library_gives_right_pairs_within_each_answer(tmp_path):
    library = tmp_path / "library.jsonl"
    library.write_text(json.dumps({"id": "arrival", "questions": ["where is my card", "card not arrived",
                                                                  "when does my card come"], "answer": "5 days"})
                       + "\n" + json.dumps({"id": "alone", "questions": ["what is the fee"], "answer": "none"}) + "\n")
    labels = verified.from_curated(str(library))
    assert [(x.question, x.entry_question) for x in labels] == [("where is my card", "card not arrived"),
                                                                 ("card not arrived", "when does my card come")]
    assert all(x.good and x.source == "curated" for x in labels)
