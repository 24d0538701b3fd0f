"""The base small model and a distilled one side by side on held-out requests: agreement with the large
model's logged answers, tokens/s, and the share of traffic the router could send small at each agreement.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from cachegate.distill import agreement as ag
from cachegate.distill.answers import answer, decode_speed, load
from cachegate.distill.entry import AnswerEntry
from cachegate.distill.routing_share import router_score, share_below, shares

TARGETS = (0.5, 0.6, 0.7, 0.8, 0.9)
DEFAULT_THRESHOLD = 0.8        # routing.complexity.threshold's default


@dataclass(frozen=True)
class CompareOptions:
    max_tokens: int = 96
    dtype: str = "auto"
    agree_at: float = 0.8            # an answer agrees when its embedding cosine reaches this
    embed: bool = True               # embedding similarity (MiniLM); ROUGE-L stands in without it
    speed_prompts: int = 16          # prompts of the fixed-length speed run (0: none)
    speed_tokens: int = 64           # tokens each of them decodes
    speed_repeats: int = 2           # alternating runs; each model's best counts
    targets: tuple[float, ...] = TARGETS


def compare(entries: list[AnswerEntry], models: dict[str, str], opts: CompareOptions = CompareOptions()) -> dict:
    """`models`: label -> spec (e.g. {"base": "smollm2-135m-instruct", "distilled": "out/"})."""
    engines = {label: load(spec, opts.dtype) for label, spec in models.items()}
    references = [e.answer for e in entries]
    embed = ag.minilm_embed() if opts.embed else None
    scores = [router_score(e) for e in entries]
    report: dict = {"n": len(entries), "models": dict(models), "dtype": opts.dtype,
                    "default_threshold_share": share_below(scores, DEFAULT_THRESHOLD)}
    rows: dict[str, list[ag.Agreement]] = {}
    texts: dict[str, list[str]] = {}
    for label, engine in engines.items():
        out = answer(engine, entries, opts.max_tokens)
        rows[label] = ag.agreements(out.texts, references, embed)
        report[label] = ag.summary(rows[label], opts.agree_at) | {"answer_tokens_per_s": out.tokens_per_s}
        agrees = [r.agrees(opts.agree_at) for r in rows[label]]
        report[label]["routing"] = [plain(s) for s in shares(scores, agrees, opts.targets)]
        texts[label] = out.texts
    speed(engines, entries[:opts.speed_prompts], opts, report)
    report["per_request"] = [{"question": e.question, "large": e.answer, "router_score": round(s, 4),
                              **{label: {"answer": texts[label][i], **asdict(rows[label][i])} for label in rows}}
                             for i, (e, s) in enumerate(zip(entries, scores))]
    return report


def speed(engines: dict, entries: list[AnswerEntry], opts: CompareOptions, report: dict) -> None:
    if not entries:
        return
    best = {label: 0.0 for label in engines}
    for _ in range(opts.speed_repeats):            # alternate, so shared cores slow both alike
        for label, engine in engines.items():
            best[label] = max(best[label], decode_speed(engine, entries, opts.speed_tokens))
    for label, value in best.items():
        report[label]["decode_tokens_per_s"] = value


def plain(share) -> dict:
    d = asdict(share)
    d["threshold"] = None if math.isinf(d["threshold"]) else d["threshold"]   # None: everything small
    return d


METRICS = (("ROUGE-L", "rouge_l"), ("embedding similarity", "similarity"), ("exact match (short answers)", "exact_match"),
           ("agreement rate", "agree_rate"), ("answer tokens/s", "answer_tokens_per_s"),
           ("decode tokens/s (fixed length)", "decode_tokens_per_s"))


def table(report: dict, labels: tuple[str, str] = ("base", "distilled")) -> str:
    a, b = labels
    lines = [f"{'held-out requests: ' + str(report['n']):<34}{a:>12}{b:>12}{'change':>10}"]
    for name, key in METRICS:
        x, y = report[a].get(key), report[b].get(key)
        if x is None or y is None:
            continue
        change = f"x{y / x:.2f}" if key.endswith("per_s") and x else f"{y - x:+.3f}"
        lines.append(f"{name:<34}{x:>12.3f}{y:>12.3f}{change:>10}")
    lines.append(f"{'  short answers scored by exact match':<34}{report[a]['short_answers']:>12}")
    lines.append(f"{'  an answer agrees at cosine >=':<34}{report[a]['agree_at']:>12}")
    lines.append(f"router share small today (threshold {DEFAULT_THRESHOLD}): {report['default_threshold_share']:.2%}")
    lines.append("share the small tier can take at agreement T (simplest requests first; threshold to set):")
    for sa, sb in zip(report[a]["routing"], report[b]["routing"]):
        lines.append(f"  T={sa['target']:.1f}{'':<26}{sa['share']:>12.2%}{sb['share']:>12.2%}"
                     f"   threshold {fmt(sb['threshold'])}")
    return "\n".join(lines)


def fmt(threshold: float | None) -> str:
    return "none needed (all small)" if threshold is None else f"{threshold:.3f}"
