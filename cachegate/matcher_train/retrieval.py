"""Training the retrieval projection: a linear map after the frozen packaged MiniLM, fitted with
sentence-transformers' trainer and MultipleNegativesRankingLoss (in-batch negatives plus a mined hard negative
per row, batches free of same-intent rows). Only the map is kept."""
from __future__ import annotations

import numpy as np

from cachegate.matcher_train.pairs import DistinctGroupBatches, Triplet
from cachegate.matcher_train.settings import TrainSettings


def projection_model(dim: int = 384):
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Dense

    from cachegate.semantic.embedder import PACKAGED, resolve_path
    model = SentenceTransformer(resolve_path(PACKAGED), device="cpu")
    for p in model.parameters():
        p.requires_grad_(False)
    model.append(Dense(dim, dim, bias=False, activation_function=torch.nn.Identity(), init_weight=torch.eye(dim)))
    return model


def train_projection(rows: list[Triplet], cfg: TrainSettings, out_dir: str) -> np.ndarray:
    """The fitted (d, d) projection: tuned vector = normalise(projection @ plain unit vector)."""
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    model = projection_model()
    data = Dataset.from_dict({"anchor": [r.anchor for r in rows], "positive": [r.positive for r in rows],
                              "negative": [r.negative for r in rows]})
    args = SentenceTransformerTrainingArguments(
        output_dir=out_dir, per_device_train_batch_size=cfg.projection_batch, num_train_epochs=cfg.projection_epochs,
        learning_rate=cfg.projection_lr, warmup_steps=0.05, bf16=cfg.bf16, use_cpu=True, seed=cfg.seed,
        data_seed=cfg.seed, save_strategy="no", report_to="none", logging_steps=50, dataloader_num_workers=0,
        batch_sampler=DistinctGroupBatches([r.group for r in rows], cfg.projection_batch, cfg.seed),
        disable_tqdm=not cfg.progress)
    SentenceTransformerTrainer(model=model, args=args, train_dataset=data,
                               loss=MultipleNegativesRankingLoss(model)).train()
    return model[-1].linear.weight.detach().float().numpy().copy()


def apply_projection(projection: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    v = vectors @ projection.T
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
