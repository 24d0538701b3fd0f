"""`cachegate train matcher`: rebuild every file of the semantic matcher from the development data.

Stages: plain embeddings of every text, the retrieval projection, the verifier, then the decision fitted on
lookups replayed over held-apart data; the folder gets `matcher.json`, the weights and `CARD.md`.
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
    p.add_argument("--calibration-domains", default="",
                   help="domains held apart to fit the decision on (default: the 2 of median confusability)")
    p.add_argument("--target-false-hit-rate", type=float, default=0.02)
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--embedding-cache", help="folder to memoise plain embeddings in")
    p.add_argument("--refit", action="store_true",
                   help="keep the projection and verifier already in --out; refit only the decision")
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from cachegate.semantic.matcher_files import packaged_folder
    cfg = TrainSettings(seed=args.seed, threads=args.threads, target=args.target_false_hit_rate,
                        progress=not args.no_progress)
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
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    np.random.seed(cfg.seed)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    stages = tqdm(total=4, desc="train matcher", unit="stage", disable=not cfg.progress)
    embed = PlainVectors(args.embedding_cache)
    corpus = corpus_data.load_corpus(Path(args.data), corpus_data.QUICK if args.quick else corpus_data.FULL,
                                     split_names(args.leave_out), split_names(args.calibration_domains), cfg.seed,
                                     embed)
    vectors = embed(corpus.texts())
    stages.update()
    if args.refit:
        projection, seconds = refit_inputs(out)
        stages.update(2)
    else:
        projection = train_models(corpus, vectors, cfg, out, seconds, stages)
    t = time.perf_counter()
    from cachegate.matcher_train.fitting import fit_and_write
    fitted = fit_and_write(corpus, vectors, projection, cfg, out)
    seconds["calibration"] = time.perf_counter() - t
    elapsed = time.perf_counter() - started     # a refit adds the recorded training times of the models it kept
    seconds["total"] = elapsed + (seconds["projection"] + seconds["verifier"] if args.refit else 0.0)
    stages.update()
    stages.close()
    return write_manifest(out, cfg, args, corpus, fitted, seconds)


def train_models(corpus, vectors: dict[str, np.ndarray], cfg: TrainSettings, out: Path, seconds: dict[str, float],
                 stages) -> np.ndarray:
    """The projection, then the verifier trained on pairs mined with it; both written to `out`."""
    from cachegate.matcher_train import pairs as mining
    from cachegate.matcher_train.retrieval import apply_projection, train_projection
    from cachegate.matcher_train.verifier_train import train_verifier
    from cachegate.semantic.matcher_files import save_projection
    with tempfile.TemporaryDirectory() as scratch:
        t = time.perf_counter()
        projection = train_projection(mining.triplets(corpus.train, corpus.qqp_train, vectors, cfg.seed), vectors,
                                      cfg, scratch)
        save_projection(out, projection)
        seconds["projection"] = time.perf_counter() - t
        stages.update()
        t = time.perf_counter()
        texts = sorted(vectors)
        tuned = dict(zip(texts, apply_projection(projection, np.stack([vectors[x] for x in texts]))))
        domain_of = {i: d for d, intents in corpus.domains.items() for i in intents}
        train_verifier(mining.verifier_pairs(corpus.train, corpus.qqp_train, tuned, domain_of, cfg.seed,
                                             cfg.hard_negatives), cfg, out, scratch)
        seconds["verifier"] = time.perf_counter() - t
        stages.update()
    return projection


def refit_inputs(out: Path) -> tuple[np.ndarray, dict[str, float]]:
    """The projection already in `out` (as stored), and the training times its matcher.json recorded."""
    from safetensors.numpy import load_file
    projection = load_file(str(out / "projection.safetensors"))["projection"].astype(np.float32)
    trained = json.loads((out / "matcher.json").read_text()).get("trained", {}).get("seconds", {})
    return projection, {k: trained.get(k, 0.0) for k in ("projection", "verifier")}


class PlainVectors:
    """Plain MiniLM embeddings of texts (memoised on disk with --embedding-cache)."""

    def __init__(self, cache_dir: str | None) -> None:
        from cachegate.semantic.embedder import PACKAGED, Embedder
        self.embedder = Embedder(PACKAGED, cache_size=0)
        self.cache_dir = cache_dir
        self.known: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> dict[str, np.ndarray]:
        from cachegate.semantic import datasets
        missing = [t for t in texts if t not in self.known]
        if missing:
            self.known |= datasets.embed_all(self.embedder, missing, self.cache_dir)
        return {t: self.known[t] for t in texts}


def write_manifest(out: Path, cfg: TrainSettings, args: argparse.Namespace, corpus, fitted: dict,
                   seconds: dict[str, float]) -> dict:
    from cachegate.matcher_train.card import write_card
    matcher = json.loads((out / "matcher.json").read_text())
    sizes = {f.name: f.stat().st_size for f in sorted(out.iterdir()) if f.suffix in (".safetensors", ".json")}
    manifest = {"command": command_line(args), "data": data_description(corpus), "settings": cfg.as_dict(),
                "training_domains": corpus.training_domains, "calibration_domains": corpus.calibration_domains,
                "left_out": corpus.left_out, "seconds": {k: round(v, 1) for k, v in seconds.items()},
                "cpus": os.cpu_count(), "torch_threads": cfg.threads, "file_bytes": sizes, "fitted": fitted}
    matcher["trained"] = {k: v for k, v in manifest.items() if k != "fitted"}
    (out / "matcher.json").write_text(json.dumps(matcher, indent=1) + "\n")
    write_card(out, manifest)
    return manifest


def data_description(corpus) -> str:
    return (f"CLINC150 train {len(corpus.train)} questions, calibration {len(corpus.calibration)} questions + "
            f"{len(corpus.out_of_scope)} out-of-scope; Quora train {len(corpus.qqp_train)} pairs, held apart "
            f"{len(corpus.qqp_held)}")


def command_line(args: argparse.Namespace) -> str:
    parts = ["cachegate train matcher", f"--seed {args.seed}"]
    parts += ["--quick"] if args.quick else []
    parts += [f"--leave-out {args.leave_out}"] if args.leave_out else []
    parts += [f"--calibration-domains {args.calibration_domains}"] if args.calibration_domains else []
    parts += [f"--target-false-hit-rate {args.target_false_hit_rate:g}"] if args.target_false_hit_rate != 0.02 else []
    return " ".join(parts)
