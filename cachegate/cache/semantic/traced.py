"""The semantic tier's models as frozen TorchScript graphs: the sentence encoder (a BERT-style encoder, mean
pooling and maybe normalisation; sentence-transformers' own pipeline for any other model) and the verifier's
cross-encoder.

Why: eager PyTorch returns to Python between the ~150 small ops of a MiniLM forward and takes the GIL back each
time. With the event loop busy on the other core (index search, matching), each of those returns can wait out
the interpreter's switch interval, so under 32 concurrent lookups the worker threads ran at about half speed and
two cores did one core's work. A frozen trace runs the whole forward in C++ with the GIL released once; on one
thread alone it is also 10-20% faster (fewer dispatches). In float32 its results are the eager pipeline's to the
last bit: each trace is checked against eager on batches of other sizes and lengths than the one it was traced
on, and anything that fails to trace or disagrees keeps the eager path.
"""
from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
TRACE_TEXTS = ["a short question", "a somewhat longer question about where my new card is, and when it arrives"]
CHECKS = [["one question alone, unpadded"], ["hi", "two words", "a third text, longer than the other two are"]]


def traceable(model) -> bool:
    """Whether `model` is the pipeline `traced_forward` reproduces: a transformer, mean pooling, maybe Normalize."""
    names = [type(m).__name__ for m in model]
    if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return False
    return getattr(model[1], "pooling_mode", None) == "mean" and hasattr(model[0], "auto_model")


def frozen(module, example: dict, checks: list[dict], eager: Callable[[dict], torch.Tensor], dtype):
    """`module(*tensors)` traced on `example` and frozen, as a function of a features dict; None when tracing
    fails or the graph disagrees with `eager` on any of `checks` (1e-4 in float32, 2e-2 in bfloat16)."""
    import torch
    names = [n for n in INPUTS if n in example]
    quiet = logging.getLogger("transformers")    # tracing reads every attribute, `loss_function` among them,
    level = quiet.level                              # which logs a warning about a causal-LM loss
    quiet.setLevel(logging.ERROR)
    try:
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")      # TracerWarnings on shape checks: the checks below decide
            graph = torch.jit.freeze(torch.jit.trace(module.eval(), tuple(example[n] for n in names),
                                                     strict=False, check_trace=False))
            pairs = [(graph(*(f[n] for n in names)), eager(f).float()) for f in checks]
    except Exception as exc:  # noqa: BLE001 - any tracing failure leaves the eager pipeline in charge
        log.warning("trace of %s failed (%s): using the eager pipeline", type(module).__name__, exc)
        return None
    finally:
        quiet.setLevel(level)
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2     # bfloat16 keeps about 3 significant digits
    if any(got.shape != want.shape or (got - want).abs().max().item() > tolerance for got, want in pairs):
        log.warning("trace of %s disagrees with the eager pipeline: using the eager pipeline", type(module).__name__)
        return None

    def traced(features: dict) -> torch.Tensor:
        return graph(*(features[n] for n in names))
    return traced


def traced_forward(model) -> Callable[[dict], torch.Tensor] | None:
    """`model.preprocess` features -> unit-norm sentence embeddings through one frozen graph, or None when `model`
    is another kind of pipeline or the trace disagrees with it."""
    import torch
    if not traceable(model):
        return None
    encoder = model[0].auto_model

    class MeanPooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            kwargs = dict(zip(names, inputs))
            tokens = self.encoder(**kwargs).last_hidden_state
            mask = kwargs["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled.float(), dim=-1)

    example = model.preprocess(TRACE_TEXTS)
    names = [n for n in INPUTS if n in example]
    return frozen(MeanPooled(), example, [model.preprocess(texts) for texts in CHECKS],
                  lambda f: torch.nn.functional.normalize(model.forward(f)["sentence_embedding"].float(), dim=-1),
                  encoder.dtype)


def traced_logits(tokenizer, model, max_length: int) -> Callable[[dict], torch.Tensor] | None:
    """Tokenised (question, cached question) pairs -> the cross-encoder's first logit through one frozen graph,
    or None when the trace fails or disagrees."""
    import torch

    def pairs(rows: list[str]) -> dict:
        return dict(tokenizer(rows, rows[::-1], padding=True, truncation=True, max_length=max_length,
                              return_tensors="pt"))

    class FirstLogit(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.model(**dict(zip(names, inputs))).logits[:, 0].float()

    example = pairs(TRACE_TEXTS)
    names = [n for n in INPUTS if n in example]
    return frozen(FirstLogit(), example, [pairs(texts) for texts in CHECKS],
                  lambda f: model(**f).logits[:, 0], next(model.parameters()).dtype)
