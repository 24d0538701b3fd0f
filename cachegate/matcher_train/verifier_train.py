"""Training the verifier: sentence-transformers' CrossEncoder over the packaged MiniLM's first layers (embeddings
frozen) and a new one-logit head, fine-tuned with BinaryCrossEntropyLoss on mined pairs. What changed is written
as int8 deltas from the packaged weights (`cachegate.cache.semantic.matcher_files.save_verifier`)."""
from __future__ import annotations

from pathlib import Path

from cachegate.cache.semantic.matcher_files import base_verifier, save_verifier
from cachegate.matcher_train.pairs import Labelled
from cachegate.matcher_train.settings import TrainSettings


def cross_encoder(cfg: TrainSettings):
    import torch
    from sentence_transformers import CrossEncoder

    from cachegate.cache.semantic.embedder import PACKAGED, resolve_path
    torch.manual_seed(cfg.seed)
    model = CrossEncoder(resolve_path(PACKAGED), num_labels=1, max_length=cfg.max_length, device="cpu",
                         config_kwargs={"num_hidden_layers": cfg.layers})
    for p in model.model.bert.embeddings.parameters():
        p.requires_grad_(False)             # the packaged embeddings stay as they are (and are not shipped)
    return model


def training_arguments(cfg: TrainSettings, scratch: str):
    """The trainer's arguments; bfloat16 autocast only where the CPU multiplies it natively (emulated it made the
    verifier 12x slower)."""
    from sentence_transformers.cross_encoder import CrossEncoderTrainingArguments

    from cachegate.cache.semantic.embedder import native_bf16
    return CrossEncoderTrainingArguments(
        output_dir=scratch, per_device_train_batch_size=cfg.verifier_batch, num_train_epochs=cfg.verifier_epochs,
        learning_rate=cfg.verifier_lr, warmup_steps=0.05, bf16=cfg.bf16 and native_bf16(), use_cpu=True,
        seed=cfg.seed, data_seed=cfg.seed, save_strategy="no", report_to="none", logging_steps=50,
        dataloader_num_workers=0, disable_tqdm=not cfg.progress)


def train_verifier(pairs: list[Labelled], cfg: TrainSettings, folder: Path, scratch: str) -> None:
    from datasets import Dataset
    from sentence_transformers.cross_encoder import CrossEncoderTrainer
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    model = cross_encoder(cfg)
    data = Dataset.from_dict({"a": [p.a for p in pairs], "b": [p.b for p in pairs],
                              "label": [p.label for p in pairs]})
    args = training_arguments(cfg, scratch)
    CrossEncoderTrainer(model=model, args=args, train_dataset=data, loss=BinaryCrossEntropyLoss(model)).train()
    save_verifier(folder, model.model, base_verifier(cfg.layers)[1],
                  {"layers": cfg.layers, "max_length": cfg.max_length})
