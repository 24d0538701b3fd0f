"""`python -m loadtests.action_pairs`: each matcher replayed at each fixed cut and at its own fitted one, through the
real tier; a looser cut serves more; table, JSON and PNG written."""
from __future__ import annotations

import json

from cachegate.cache.semantic.matcher_files import packaged_folder
from loadtests.action_pairs import fitted_cut, main, with_cut


def test_with_cut_sets_the_default_targets_cosine_and_margin_and_leaves_the_source(tmp_path):
    copy = with_cut(packaged_folder(), (0.5, 0.07), tmp_path / "copy")
    assert fitted_cut(copy) == (0.5, 0.07)
    assert fitted_cut(packaged_folder()) != (0.5, 0.07)
    assert (copy / "projection.safetensors").read_bytes() == (packaged_folder() / "projection.safetensors").read_bytes()


def test_the_study_replays_every_cut_and_a_looser_cut_serves_more(tmp_path):
    out = tmp_path / "out"
    assert main(["--matchers", "packaged", "--cuts", "0.95:0.30,0.40:0.02", "--seeds", "0", "--sessions", "150",
                 "--out", str(out)]) == 0
    rows = json.loads((out / "action_pairs.json").read_text())["rows"]
    assert [r["fitted"] for r in rows] == [True, False, False]
    assert rows[0]["cut"] == list(fitted_cut(packaged_folder()))
    strict, loose = rows[1], rows[2]
    assert loose["served"] > strict["served"] and loose["askable"] == strict["askable"] > 0
    assert (out / "action_pairs.png").stat().st_size > 0
