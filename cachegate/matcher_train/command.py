"""`cachegate train matcher`: rebuild every file of the semantic matcher from the development data.

Stages: plain embeddings of every text; cross-fitting (per fold of domains, a projection, and with `--verifier` a
verifier, trained without them replay the fold's lookups); the shipped projection on every domain; optionally the
shipped verifier; the cut fitted on the cross-fitted lookups. The folder gets `matcher.json`, the weights and `CARD.md`.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from cachegate.matcher_train import data as corpus_data
from cachegate.matcher_train.settings import TrainSettings, quick


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", default=str(corpus_data.DEFAULT_DATA),
                   help="folder with intents/clinc150*.json and semantic/qqp_train.csv")
    p.add_argument("--out", help="where the matcher goes (default: the packaged policies/data/matcher)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="a small slice, for CI: same stages, tiny model")
    p.add_argument("--leave-out", default="", help="domains used for nothing at all (comma-separated)")
    p.add_argument("--target-false-hit-rate", type=float, default=0.02)
    p.add_argument("--confidence", type=float, default=TrainSettings.confidence,
                   help="one-sided confidence at which a cut's false-hit rate must hold its target")
    p.add_argument("--absent-share", type=float, default=0.0,
                   help="fit the cut for a cache where this share (at most 0.5) of the questions asked have no answer "
                        "cached, every hit on them wrong (0: every question's answer cached, as intent mode asks)")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--embedding-cache", help="folder to memoise plain embeddings in")
    p.add_argument("--from-verified", metavar="LABELS",
                   help="verified labels (JSON lines from verify.labels_path) to adapt the projection and tighten "
                        "the cut with")
    p.add_argument("--from-curated", metavar="LIBRARY",
                   help="a curated library (JSONL or CSV): its example questions of one answer as right pairs")
    p.add_argument("--verifier", action="store_true",
                   help="also train the cross-encoder verifier (one per fold, cross-fitted like the projection, and one "
                        "shipped) and fit a floor on its logit with the cut (+80 min here)")
    p.add_argument("--no-action-pairs", action="store_true",
                   help="train without the minimal pairs on the action verb (cachegate.matcher_train.actions)")
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from cachegate.cache.semantic.matcher_files import packaged_folder
    cfg = TrainSettings(seed=args.seed, threads=args.threads, target=args.target_false_hit_rate,
                        confidence=args.confidence, absent_share=args.absent_share, progress=not args.no_progress,
                        action_pairs=not args.no_action_pairs)
    cfg = quick(cfg) if args.quick else cfg
    out = Path(args.out) if args.out else packaged_folder()
    out.mkdir(parents=True, exist_ok=True)
    manifest = train(cfg, args, out)
    print(json.dumps({"out": str(out), "seconds": manifest["seconds"], "file_bytes": manifest["file_bytes"],
                      "fitted": manifest["fitted"]["sets"]}, indent=1))
    return 0


def split_names(text: str) -> list[str]:
    return [d.strip() for d in text.split(",") if d.strip()]


def train(cfg: TrainSettings, args: argparse.Namespace, out: Path) -> dict:
    import torch
    from tqdm import tqdm

    from cachegate.cache.semantic.matcher_files import save_projection
    from cachegate.matcher_train import actions, fitting, simulate, verified
    from cachegate.matcher_train.pairs import triplets
    from cachegate.matcher_train.retrieval import train_projection
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    np.random.seed(cfg.seed)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    embed = PlainVectors(args.embedding_cache)
    corpus = corpus_data.load_corpus(Path(args.data), corpus_data.QUICK if args.quick else corpus_data.FULL,
                                     split_names(args.leave_out), cfg.seed)
    stages = tqdm(total=len(corpus.folds) + 3 + args.verifier, desc="train matcher", unit="stage",
                  disable=not cfg.progress)
    labels = verified.load(args.from_verified) if args.from_verified else []
    labels += verified.from_curated(args.from_curated) if args.from_curated else []
    contrasts = actions.minimal_pairs(corpus.train, cfg.seed) if cfg.action_pairs else []
    vectors = embed(corpus.texts() + verified.texts(labels) + actions.texts(contrasts))
    adapting = verified.triplets(labels, cfg.seed)
    seconds["embeddings"] = time.perf_counter() - started
    stages.update()
    with tempfile.TemporaryDirectory() as scratch:
        t = time.perf_counter()
        parts, absent_parts = [], []
        for k, fold in enumerate(corpus.folds):
            rows, fold_contrasts = corpus.outside(fold, contrasts)
            fold_projection = train_projection(triplets(rows, corpus.qqp_train, vectors, cfg.seed) + fold_contrasts
                                               + adapting, vectors, cfg, scratch)
            lookups = fitting.fold_lookups(corpus, fold, k, vectors, fold_projection, cfg)
            gone = fitting.fold_absent(corpus, fold, k, vectors, fold_projection, cfg)
            if args.verifier:      # scored by a verifier that never read the fold either: an honest logit floor
                logits_of = train_verifier_on(rows, corpus, vectors, fold_projection, cfg,
                                              Path(scratch) / f"fold-verifier-{k}", scratch)
                lookups, gone = simulate.scored(lookups, logits_of), simulate.scored(gone, logits_of)
            parts.append(lookups)
            absent_parts.append(gone)
            stages.update()
        held, absent = simulate.pooled(UNSEEN, parts), simulate.pooled(fitting.ABSENT, absent_parts)
        seconds["cross-fitting"] = time.perf_counter() - t
        t = time.perf_counter()
        projection = train_projection(triplets(corpus.train, corpus.qqp_train, vectors, cfg.seed) + contrasts
                                      + adapting, vectors, cfg, scratch)
        save_projection(out, projection)
        seconds["projection"] = time.perf_counter() - t
        stages.update()
        logits_of = train_verifier_stage(corpus, vectors, projection, cfg, out, scratch, seconds, stages) \
            if args.verifier else drop_verifier(out)
    t = time.perf_counter()
    final = fitting.provisional(projection, cfg)
    quora = simulate.pairs("quora (held apart)", final, corpus.qqp_held, vectors)
    general = simulate.pair_cache(GENERAL, final, corpus.qqp_held, vectors, cfg.top_k)
    seen = simulate.replay(SEEN, final, simulate.warm(corpus.train, cfg.per_intent, cfg.seed), corpus.val, vectors,
                           cfg.top_k)
    if logits_of is not None:      # the shipped verifier's logit on each lookup's best servable candidate
        quora, general, seen = (simulate.scored(s, logits_of) for s in (quora, general, seen))
    cuts = fitting.fit_cuts(fitting.with_absent(held, absent, cfg.absent_share, cfg.seed), quora, general, cfg)
    sets = {UNSEEN: held.part(held.relevant, UNSEEN), "out_of_scope": held.part(~held.relevant, "out_of_scope"),
            fitting.ABSENT: absent, "quora (held apart)": quora, GENERAL: general, SEEN: seen}
    if labels:
        def tuned_cosine(a: str, b: str) -> float:
            return float(final.tuned(vectors[a]) @ final.tuned(vectors[b]))
        cuts = {t: verified.tightened(c, labels, tuned_cosine, t) for t, c in cuts.items()}
    cut = cuts[cfg.target]
    fitted = {"target_false_hit_rate": cfg.target, "confidence": cfg.confidence,
              "sets": {name: fitting.figures(s, cut) for name, s in sets.items()}}
    if labels:
        fitted["sets"]["verified labels (served cosine only)"] = verified.figures(cut, labels, tuned_cosine)
    fitting.write_matcher(out, cfg, cuts, fitted)
    seconds["calibration"] = time.perf_counter() - t
    seconds["total"] = time.perf_counter() - started
    stages.update()
    stages.close()
    return write_manifest(out, cfg, args, corpus, fitted, seconds, len(contrasts))


UNSEEN = "intents (unseen domains, cross-fitted)"
SEEN = "seen domains (val, optimistic)"
GENERAL = "quora (cache mode, held apart)"


def train_verifier_stage(corpus, vectors: dict[str, np.ndarray], projection: np.ndarray, cfg: TrainSettings,
                         out: Path, scratch: str, seconds: dict[str, float], stages):
    """The shipped cross-encoder, trained on every domain; its logits, for the held-apart Quora and seen rows."""
    t = time.perf_counter()
    logits_of = train_verifier_on(corpus.train, corpus, vectors, projection, cfg, out, scratch)
    seconds["verifier"] = time.perf_counter() - t
    stages.update()
    return logits_of


def train_verifier_on(rows: list[tuple[str, str]], corpus, vectors: dict[str, np.ndarray], projection: np.ndarray,
                      cfg: TrainSettings, folder: Path, scratch: str):
    """A cross-encoder trained on `rows` (plus every Quora pair), its hard negatives mined with `projection`,
    saved in `folder`; its logits."""
    from cachegate.cache.semantic.verifier import Verifier
    from cachegate.matcher_train import pairs as mining
    from cachegate.matcher_train.retrieval import apply_projection
    from cachegate.matcher_train.verifier_train import train_verifier
    texts = sorted(vectors)
    tuned = dict(zip(texts, apply_projection(projection, np.stack([vectors[x] for x in texts]))))
    folder.mkdir(parents=True, exist_ok=True)
    train_verifier(mining.verifier_pairs(rows, corpus.qqp_train, tuned, corpus.domain_of(), cfg.seed,
                                         cfg.hard_negatives), cfg, folder, scratch)
    return Verifier(str(folder), threads=cfg.threads).logits


def drop_verifier(out: Path) -> None:
    """A matcher without a verifier: an older run's verifier files must not be loaded beside the new cut."""
    for name in ("verifier.safetensors", "verifier.json"):
        (out / name).unlink(missing_ok=True)


class PlainVectors:
    """Plain MiniLM embeddings of texts (memoised on disk with --embedding-cache), in float32 on every host: a
    rebuild's training vectors do not depend on which precision the host serves faster."""

    def __init__(self, cache_dir: str | None) -> None:
        from cachegate.cache.semantic.embedder import PACKAGED, Embedder
        self.embedder = Embedder(PACKAGED, cache_size=0, precision="float32")
        self.cache_dir = cache_dir
        self.known: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> dict[str, np.ndarray]:
        from cachegate.cache.semantic import datasets
        missing = [t for t in texts if t not in self.known]
        if missing:
            self.known |= datasets.embed_all(self.embedder, missing, self.cache_dir)
        return {t: self.known[t] for t in texts}


def write_manifest(out: Path, cfg: TrainSettings, args: argparse.Namespace, corpus, fitted: dict,
                   seconds: dict[str, float], action_pairs: int = 0) -> dict:
    from cachegate.matcher_train.card import write_card
    matcher = json.loads((out / "matcher.json").read_text())
    sizes = {f.name: f.stat().st_size for f in sorted(out.iterdir()) if f.suffix in (".safetensors", ".json")}
    manifest = {"command": command_line(args), "data": data_description(corpus, action_pairs),
                "settings": cfg.as_dict(),
                "domains": list(corpus.domains), "folds": corpus.folds, "left_out": corpus.left_out,
                "verifier": bool(args.verifier), "seconds": {k: round(v, 1) for k, v in seconds.items()},
                "cpus": os.cpu_count(), "torch_threads": cfg.threads, "file_bytes": sizes, "fitted": fitted}
    matcher["trained"] = {k: v for k, v in manifest.items() if k != "fitted"}
    (out / "matcher.json").write_text(json.dumps(matcher, indent=1) + "\n")
    write_card(out, manifest)
    return manifest


def data_description(corpus, action_pairs: int = 0) -> str:
    pairs = f"; {action_pairs} minimal pairs on the action verb made from them" if action_pairs else ""
    return (f"CLINC150 train {len(corpus.train)} questions ({len(corpus.domains)} domains){pairs}; looked up: val "
            f"{len(corpus.val)} questions + {len(corpus.out_of_scope)} out-of-scope; Quora train "
            f"{len(corpus.qqp_train)} pairs, held apart {len(corpus.qqp_held)}")


def command_line(args: argparse.Namespace) -> str:
    parts = ["cachegate train matcher", f"--seed {args.seed}"]
    parts += ["--quick"] if args.quick else []
    parts += [f"--leave-out {args.leave_out}"] if args.leave_out else []
    parts += ["--verifier"] if args.verifier else []
    parts += ["--no-action-pairs"] if args.no_action_pairs else []
    parts += [f"--from-verified {args.from_verified}"] if args.from_verified else []
    parts += [f"--from-curated {args.from_curated}"] if args.from_curated else []
    parts += [f"--target-false-hit-rate {args.target_false_hit_rate:g}"] if args.target_false_hit_rate != 0.02 else []
    parts += [f"--confidence {args.confidence:g}"] if args.confidence != TrainSettings.confidence else []
    parts += [f"--absent-share {args.absent_share:g}"] if args.absent_share else []
    return " ".join(parts)
