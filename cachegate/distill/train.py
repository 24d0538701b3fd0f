"""The training loop: LoRA adapters fitted to the large model's answers, seeded, on CPU, with a progress bar.

Cross-entropy on the answer tokens only, whose logits are the only ones computed (the LM head over every
prompt position would cost a fifth of each step); AdamW with a short warm-up and a linear decay; bfloat16
autocast where the CPU multiplies it natively.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from cachegate.distill.data import Example
from cachegate.distill.lora import LoRALinear


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 2
    batch_size: int = 8
    lr: float = 3e-4
    seed: int = 0
    bf16: bool = False        # autocast the forward pass to bfloat16
    warmup: float = 0.05      # share of steps the learning rate ramps up over


@dataclass
class TrainResult:
    steps: int
    examples_seen: int
    seconds: float
    cpu_seconds: float        # process CPU time: about seconds x threads when the cores are not shared
    first_loss: float
    last_loss: float          # mean over the last epoch


def batches(examples: list[Example], size: int, rng: random.Random) -> list[list[Example]]:
    """Shuffled, then grouped by similar length so that padding stays small."""
    order = examples[:]
    rng.shuffle(order)
    chunks = [sorted(order[i:i + size * 8], key=lambda x: len(x.ids)) for i in range(0, len(order), size * 8)]
    out = [c[i:i + size] for c in chunks for i in range(0, len(c), size)]
    rng.shuffle(out)
    return out


def tensors(batch: list[Example]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """ids and attention mask [B, L] (right-padded), and a mask of the positions whose next token is scored."""
    width = max(len(x.ids) for x in batch)
    ids = torch.zeros(len(batch), width, dtype=torch.long)
    mask = torch.zeros(len(batch), width, dtype=torch.long)
    scored = torch.zeros(len(batch), width, dtype=torch.bool)
    for row, x in enumerate(batch):
        ids[row, :len(x.ids)] = torch.tensor(x.ids)
        mask[row, :len(x.ids)] = 1
        scored[row, x.answer_from - 1:len(x.ids) - 1] = True
    return ids, mask, scored


def loss_of(model, batch: list[Example], bf16: bool) -> torch.Tensor:
    ids, mask, scored = tensors(batch)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state      # [B, L, D]
        logits = model.lm_head(hidden[scored])                                           # [N, V]
    targets = ids[:, 1:][scored[:, :-1]]
    return F.cross_entropy(logits.float(), targets)


def schedule(step: int, total: int, warmup: float) -> float:
    ramp = max(1, int(total * warmup))
    return (step + 1) / ramp if step < ramp else max(0.0, (total - step) / max(1, total - ramp))


def train(model, adapters: dict[str, LoRALinear], examples: list[Example], cfg: TrainConfig,
          progress: bool = True) -> TrainResult:
    from tqdm import tqdm
    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    params = [p for a in adapters.values() for p in (a.lora_a, a.lora_b)]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    plan = [batches(examples, cfg.batch_size, rng) for _ in range(cfg.epochs)]
    total = sum(len(p) for p in plan)
    sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: schedule(s, total, cfg.warmup))
    model.train()
    started, cpu, losses, first = time.perf_counter(), time.process_time(), [], None
    bar = tqdm(total=total, desc="distill", unit="step", disable=not progress)
    for epoch, epoch_batches in enumerate(plan):
        losses = []
        for batch in epoch_batches:
            loss = loss_of(model, batch, cfg.bf16)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            sched.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.item())
            first = losses[0] if first is None else first
            bar.set_postfix(epoch=epoch + 1, loss=f"{sum(losses[-20:]) / len(losses[-20:]):.3f}")
            bar.update()
    bar.close()
    model.eval()
    return TrainResult(total, sum(len(b) for p in plan for b in p), time.perf_counter() - started,
                       time.process_time() - cpu, first or 0.0, sum(losses) / max(1, len(losses)))
