"""Training the retrieval projection: a linear map after the frozen packaged MiniLM, fitted with
sentence-transformers' trainer and MultipleNegativesRankingLoss (in-batch negatives plus a mined hard negative
per row, batches free of same-intent rows). The encoder is frozen, so its embeddings are computed once and served
to the trainer by `FrozenEncoder`; only the map is kept."""
from __future__ import annotations

import numpy as np

from cachegate.matcher_train.pairs import DistinctGroupBatches, Triplet
from cachegate.matcher_train.settings import TrainSettings


def frozen_encoder(vectors: dict[str, np.ndarray]):
    import torch
    from sentence_transformers.base.modules.input_module import InputModule

    class FrozenEncoder(InputModule):
        """The frozen encoder's embeddings of known texts, looked up instead of recomputed every step."""

        def __init__(self) -> None:
            super().__init__()
            self.row = {t: i for i, t in enumerate(vectors)}
            self.register_buffer("table", torch.tensor(np.stack(list(vectors.values())), dtype=torch.float32))

        def preprocess(self, inputs, prompt=None, **kwargs) -> dict:
            return {"input_ids": torch.tensor([self.row[t] for t in inputs], dtype=torch.long)}

        def forward(self, features: dict, **kwargs) -> dict:
            return features | {"sentence_embedding": self.table[features["input_ids"]]}

        def get_sentence_embedding_dimension(self) -> int:
            return int(self.table.shape[1])

        def save(self, *args, **kwargs) -> None:
            raise NotImplementedError("only the projection is kept")

    return FrozenEncoder()


def train_projection(rows: list[Triplet], vectors: dict[str, np.ndarray], cfg: TrainSettings,
                     out_dir: str) -> np.ndarray:
    """The fitted (d, d) projection: tuned vector = normalise(projection @ plain unit vector)."""
    import torch
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.models import Dense
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    dim = len(next(iter(vectors.values())))
    projection = Dense(dim, dim, bias=False, activation_function=torch.nn.Identity(), init_weight=torch.eye(dim))
    model = SentenceTransformer(modules=[frozen_encoder(vectors), projection], device="cpu")
    data = Dataset.from_dict({"anchor": [r.anchor for r in rows], "positive": [r.positive for r in rows],
                              "negative": [r.negative for r in rows]})
    args = SentenceTransformerTrainingArguments(
        output_dir=out_dir, per_device_train_batch_size=cfg.projection_batch, num_train_epochs=cfg.projection_epochs,
        learning_rate=cfg.projection_lr, warmup_steps=0.05, use_cpu=True, seed=cfg.seed, data_seed=cfg.seed,
        save_strategy="no", report_to="none", logging_steps=100, dataloader_num_workers=0,
        batch_sampler=DistinctGroupBatches([r.group for r in rows], cfg.projection_batch, cfg.seed),
        disable_tqdm=not cfg.progress)
    SentenceTransformerTrainer(model=model, args=args, train_dataset=data,
                               loss=MultipleNegativesRankingLoss(model)).train()
    return projection.linear.weight.detach().float().numpy().copy()


def apply_projection(projection: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    v = vectors @ projection.T
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
