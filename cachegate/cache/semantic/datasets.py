"""Readers of the labeled data formats used to fit and evaluate the similarity policy.

Pairs CSV (`question1,question2,is_duplicate`), paraphrase JSON (`origin`, `similar`: positives only) and
multi-turn JSON (a question, its answer, a follow-up, its answer). Embeddings are memoised on disk.
"""
from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    duplicate: bool


@dataclass(frozen=True)
class Conversation:
    question: str
    answer: str
    follow_up: str
    follow_up_answer: str


def read_pairs_csv(path: str | Path) -> list[Pair]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    missing = {"question1", "question2", "is_duplicate"} - set(rows[0] if rows else {})
    if missing:
        raise ValueError(f"{path}: missing columns {sorted(missing)}")
    return [Pair(r["question1"].strip(), r["question2"].strip(), r["is_duplicate"].strip() in ("1", "true", "True"))
            for r in rows if r["question1"].strip() and r["question2"].strip()]


def read_paraphrases(path: str | Path) -> list[Pair]:
    return [Pair(r["origin"].strip(), r["similar"].strip(), True) for r in json.loads(Path(path).read_text())]


def read_conversations(path: str | Path) -> list[Conversation]:
    rows = json.loads(Path(path).read_text())
    return [Conversation(r["Main Query"].strip(), r["Main Query Response"].strip(), r["Follow-Up Query"].strip(),
                         r["Follow Up Query Response"].strip()) for r in rows]


def kind_of(path: str | Path) -> str:
    """'pairs', 'paraphrases' or 'conversations', from the file's content."""
    if str(path).endswith(".csv"):
        return "pairs"
    first = json.loads(Path(path).read_text())[0]
    if "origin" in first:
        return "paraphrases"
    if "Follow-Up Query" in first:
        return "conversations"
    raise ValueError(f"{path}: not a pairs CSV, paraphrase JSON or multi-turn JSON")


def embed_all(embedder, texts: list[str], cache_dir: str | Path | None = None) -> dict[str, np.ndarray]:
    """Embeddings of the distinct texts; with `cache_dir`, memoised per text (one file per model), so any
    mix of data files only encodes the texts it has not seen before."""
    unique = sorted(set(texts))
    memo = EmbeddingMemo(cache_dir, embedder.key) if cache_dir else None
    known = memo.load() if memo else {}
    missing = [t for t in unique if t not in known]
    if missing:
        known |= dict(zip(missing, encode_with_progress(embedder, missing)))
        if memo:
            memo.save(known)
    return {t: known[t] for t in unique}


@dataclass(frozen=True)
class EmbeddingMemo:
    """Texts and their vectors in `<folder>/embeddings-<digest of the model and precision>.npz`."""
    folder: str | Path
    model_name: str     # Embedder.key

    @property
    def path(self) -> Path:
        digest = hashlib.sha256(self.model_name.encode()).hexdigest()[:16]
        return Path(self.folder) / f"embeddings-{digest}.npz"

    def load(self) -> dict[str, np.ndarray]:
        if not self.path.exists():
            return {}
        with np.load(self.path) as data:
            return dict(zip(bytes(data["texts"]).decode().split("\x00"), data["vectors"]))

    def save(self, vectors: dict[str, np.ndarray]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        texts = list(vectors)
        tmp = self.path.with_suffix(".tmp.npz")
        joined = np.frombuffer("\x00".join(texts).encode(), dtype=np.uint8)   # texts never hold NUL
        np.savez(tmp, texts=joined, vectors=np.stack([vectors[t] for t in texts]))
        tmp.replace(self.path)


def encode_with_progress(embedder, texts: list[str], batch: int = 256) -> np.ndarray:
    """Encode in batches of similar length (little padding), with a progress bar; rows follow `texts`."""
    from tqdm import tqdm
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), embedder.dim), np.float32)
    for i in tqdm(range(0, len(texts), batch), desc="embedding", unit="batch", leave=False):
        rows = order[i: i + batch]
        out[rows] = embedder.encode([texts[r] for r in rows])
    return out
