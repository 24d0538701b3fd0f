"""The last stage of training: replay held-apart lookups through the trained projection and verifier, fit the
decision, and write `matcher.json` with the figures it reaches on each held-apart set."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cachegate.calibrate import question_groups
from cachegate.matcher_train import simulate
from cachegate.matcher_train.data import Corpus
from cachegate.matcher_train.decision import figures, fit_decision, scores
from cachegate.matcher_train.settings import TrainSettings
from cachegate.semantic.policy_file import packaged_policy
from cachegate.semantic.verifier import Verifier
from policies.matcher import EVIDENCE, Cuts, MatcherPolicy
from policies.thresholds import ContextGate


def provisional(projection: np.ndarray, cfg: TrainSettings) -> MatcherPolicy:
    """The policy's retrieval side (what replaying lookups needs); the decision is what gets fitted."""
    return MatcherPolicy(projection.astype(np.float16).astype(np.float32), np.zeros(len(EVIDENCE)), 0.0,
                         {cfg.target: Cuts(0.5, 0.5, 0.5)}, cfg.target, cfg.min_tuned_cosine, cfg.verify_k,
                         cfg.min_cosine, gate=context_gate())


def context_gate() -> ContextGate:
    return ContextGate(**packaged_policy().get("context_gate", {}))


def replay(corpus: Corpus, vectors: dict[str, np.ndarray], policy: MatcherPolicy, logits_of,
           cfg: TrainSettings) -> dict[str, simulate.Lookups]:
    def by_intent(text: str, intent: str | None) -> str:
        return f"intent:{intent}" if intent else f"outside:{text}"
    case = simulate.intent_case("calibration", policy, corpus.calibration, corpus.train, corpus.out_of_scope, vectors,
                                logits_of, by_intent, cfg.per_intent, cfg.top_k, cfg.seed)
    seen = simulate.intent_case("seen domains (val)", policy, corpus.train, corpus.calibration, [], vectors,
                                logits_of, by_intent, cfg.per_intent, cfg.top_k, cfg.seed, ask=corpus.val)
    groups = np.array([f"quora:{g}" for g in question_groups(corpus.qqp_held)])
    quora = simulate.pair_case("quora (held apart)", policy, corpus.qqp_held, vectors, logits_of, groups)
    return {"intents (calibration domains)": simulate.split(case, case.relevant, "intents (calibration domains)"),
            "out_of_scope": simulate.split(case, ~case.relevant, "out_of_scope"),
            "quora (held apart)": quora, "seen domains (val)": seen}


def fit_and_write(corpus: Corpus, vectors: dict[str, np.ndarray], projection: np.ndarray, cfg: TrainSettings,
                  out: Path) -> dict:
    policy = provisional(projection, cfg)
    verifier = Verifier(str(out), threads=cfg.threads)
    sets = replay(corpus, vectors, policy, verifier.logits, cfg)
    fitting = [s for name, s in sets.items() if name != "seen domains (val)"]
    fit = fit_decision(fitting, cfg.target, cfg.confidence, cfg.seed)
    cuts = fit.thresholds[cfg.target]
    seen = sets["seen domains (val)"]
    seen_score = np.where(seen.possible, scores(seen.evidence, fit.weights, fit.bias), -1.0)
    fitted = {"target_false_hit_rate": cfg.target, "confidence": cfg.confidence,
              "sets": {s.name: figures(s, fit.oof[s.name], cuts) for s in fitting}
              | {seen.name: figures(seen, seen_score, cuts)}}
    decision = {"weights": [round(float(w), 6) for w in fit.weights], "bias": round(fit.bias, 6),
                "thresholds": {f"{t:g}": {k: round(v, 6) for k, v in c._asdict().items()}
                               for t, c in fit.thresholds.items()},
                "target_false_hit_rate": cfg.target, "min_tuned_cosine": cfg.min_tuned_cosine,
                "verify_k": cfg.verify_k, "min_cosine": cfg.min_cosine}
    matcher = {"kind": "matcher", "evidence": list(EVIDENCE), "decision": decision,
               "context_gate": {"min_similarity": policy.gate.min_similarity}, "fitted": fitted}
    (out / "matcher.json").write_text(json.dumps(matcher, indent=1) + "\n")
    return fitted
