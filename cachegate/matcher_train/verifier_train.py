"""Training the verifier: sentence-transformers' CrossEncoder over the packaged MiniLM's first layers, LoRA on
every linear map (PEFT) and a new one-logit head, trained with BinaryCrossEntropyLoss on mined pairs. Only the
LoRA factors and the head are written (`cachegate.semantic.matcher_files.save_verifier`)."""
from __future__ import annotations

from pathlib import Path

from cachegate.matcher_train.pairs import Labelled
from cachegate.matcher_train.settings import TrainSettings
from cachegate.semantic.matcher_files import lora_factors, save_verifier

LORA_TARGETS = r".*encoder\.layer\.\d+\..*(query|key|value|dense)"   # attention, its output, both feed-forward maps
HEAD = ["classifier", "pooler"]


def cross_encoder(cfg: TrainSettings):
    import torch
    from peft import LoraConfig, get_peft_model
    from sentence_transformers import CrossEncoder

    from cachegate.semantic.embedder import PACKAGED, resolve_path
    torch.manual_seed(cfg.seed)
    model = CrossEncoder(resolve_path(PACKAGED), num_labels=1, max_length=cfg.max_length, device="cpu",
                         config_kwargs={"num_hidden_layers": cfg.layers})
    lora = LoraConfig(r=cfg.lora_rank, lora_alpha=cfg.lora_alpha, lora_dropout=0.05, target_modules=LORA_TARGETS,
                      modules_to_save=HEAD)
    model[0].model = get_peft_model(model[0].model, lora)
    return model


def train_verifier(pairs: list[Labelled], cfg: TrainSettings, folder: Path, scratch: str) -> None:
    from datasets import Dataset
    from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    model = cross_encoder(cfg)
    data = Dataset.from_dict({"a": [p.a for p in pairs], "b": [p.b for p in pairs],
                              "label": [p.label for p in pairs]})
    args = CrossEncoderTrainingArguments(
        output_dir=scratch, per_device_train_batch_size=cfg.verifier_batch, num_train_epochs=cfg.verifier_epochs,
        learning_rate=cfg.verifier_lr, warmup_steps=0.05, bf16=cfg.bf16, use_cpu=True, seed=cfg.seed,
        data_seed=cfg.seed, save_strategy="no", report_to="none", logging_steps=50, dataloader_num_workers=0,
        disable_tqdm=not cfg.progress)
    CrossEncoderTrainer(model=model, args=args, train_dataset=data, loss=BinaryCrossEntropyLoss(model)).train()
    factors, scaling = lora_factors(model[0].model)
    save_verifier(folder, factors, scaling, model[0].model.merge_and_unload(),
                  {"layers": cfg.layers, "lora_rank": cfg.lora_rank, "lora_alpha": cfg.lora_alpha,
                   "max_length": cfg.max_length})
