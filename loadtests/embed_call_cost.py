"""What one forward call of the embedder costs beside its padded tokens: the constant `batch_plan` weighs.

Times the packaged MiniLM on batches of n copies of an L-token text (one torch thread, as the tier runs it),
fits `ms = per_call + per_token * n * L` by least squares on the relative error, and prints the fit per precision; `CALL_TOKENS` in
`cachegate.cache.semantic.embedder` is per_call / per_token.

    python -m loadtests.embed_call_cost [--precisions bfloat16,float32] [--seconds 0.5]
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

SHAPES = [(n, length) for length in (8, 16, 32, 64) for n in (1, 2, 4, 8, 16, 32)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--precisions", default="bfloat16,float32")
    p.add_argument("--seconds", type=float, default=0.5, help="timed per shape")
    args = p.parse_args(argv)
    import torch
    from tqdm import tqdm

    from cachegate.cache.semantic.embedder import PACKAGED, load_model
    torch.set_num_threads(1)
    fits = {}
    for precision in args.precisions.split(","):
        model = load_model(PACKAGED, precision)
        rows = [(n, length, time_call(model, n, length, args.seconds))
                for n, length in tqdm(SHAPES, desc=precision, unit="shape")]
        ms = np.array([t for *_, t in rows])
        design = np.array([[1.0, n * length] for n, length, _ in rows]) / ms[:, None]   # relative error: small
        per_call, per_token = np.linalg.lstsq(design, np.ones(len(rows)), rcond=None)[0]  # calls count as much
        fits[precision] = {"per_call_ms": round(float(per_call), 2), "per_token_ms": round(float(per_token), 4),
                           "call_tokens": round(float(per_call / per_token)), "shapes": rows}
        print(f"{precision}: {per_call:.2f} ms a call + {per_token:.3f} ms a padded token"
              f" -> a call costs {per_call / per_token:.0f} tokens' worth")
    print(json.dumps(fits))
    return 0


def time_call(model, n: int, length: int, seconds: float) -> float:
    """Mean ms of one forward call on n texts of `length` tokens (special tokens included)."""
    import torch
    features = model.preprocess([" ".join(["word"] * (length - 2))] * n)
    with torch.inference_mode():
        for _ in range(3):
            model.forward(dict(features))
        calls, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            model.forward(dict(features))
            calls += 1
    return round((time.perf_counter() - started) / calls * 1000, 3)


if __name__ == "__main__":
    raise SystemExit(main())
