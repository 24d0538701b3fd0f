"""Fitting the matcher's cut on lookups it never trained on, and writing `matcher.json` with its figures.

Cross-fitting: for each fold of domains a projection is trained without them, and the fold's val questions (with
a share of the out-of-scope questions) are looked up through it against a cache of K questions per intent of
every domain. Pooled, those lookups are what a domain the matcher never saw looks like, and the cut per target is
the (tuned cosine, margin) pair serving the most of them whose false-hit rate holds at a confidence bound. The
fold's questions are also looked up with their own answers taken out of the cache (`fold_absent`): what a live
cache is asked most, where every hit is wrong; a share of them may be mixed into the lookups the cut is fitted on
(`with_absent`, `--absent-share`). Lookups
that retrieve no other answer have no margin to read: their cosine is fitted with the held-apart Quora pairs. With
a verifier the lookups are scored by it and a floor on its logit is fitted with the cut (it gates the lone cut too).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cachegate.cache.semantic.policy_file import packaged_policy
from cachegate.matcher_train import simulate
from cachegate.matcher_train.data import Corpus
from cachegate.matcher_train.settings import TrainSettings
from policies.calibration import TARGETS, wilson_upper, z_for
from policies.matcher import EVIDENCE, Cut, MatcherPolicy
from policies.thresholds import ContextGate

COSINES = np.round(np.arange(0.30, 0.99, 0.01), 2)
MARGINS = np.round(np.arange(0.0, 0.41, 0.01), 2)
NEVER = Cut(1.01, 1.01, 1.01)


def provisional(projection: np.ndarray, cfg: TrainSettings) -> MatcherPolicy:
    """The policy's retrieval side (what replaying lookups needs), with the projection as it will be stored."""
    return MatcherPolicy(projection.astype(np.float16).astype(np.float32), {cfg.target: NEVER}, cfg.target,
                         cfg.min_cosine, gate=ContextGate(**packaged_policy().get("context_gate", {})))


def fold_lookups(corpus: Corpus, fold: list[str], index: int, vectors: dict[str, np.ndarray],
                 projection: np.ndarray, cfg: TrainSettings,
                 carried: dict[str, np.ndarray] | None = None) -> simulate.Lookups:
    """The fold's val questions and its share of out-of-scope ones, through a projection trained without it
    (`carried`: another head's vectors, judged with an identity projection; see `simulate.replay`)."""
    cache = simulate.warm(corpus.train, cfg.per_intent, cfg.seed)
    return simulate.replay(",".join(fold), provisional(projection, cfg), cache, fold_questions(corpus, fold, index),
                           vectors, cfg.top_k, carried)


def fold_questions(corpus: Corpus, fold: list[str], index: int) -> list[tuple[str, str | None]]:
    """What a fold looks up: its domains' val questions, and its share (every n-th) of the out-of-scope ones."""
    domain_of = corpus.domain_of()
    asked = [(t, i) for t, i in corpus.val if domain_of[i] in fold]
    return asked + [(t, simulate.NOTHING) for t in corpus.out_of_scope[index:: len(corpus.folds)]]


def fold_absent(corpus: Corpus, fold: list[str], index: int, vectors: dict[str, np.ndarray],
                projection: np.ndarray, cfg: TrainSettings) -> simulate.Lookups:
    """The fold's in-scope val questions, each looked up against the cache without its own intent's entries,
    through a projection trained without the fold: no cached answer is right for them (out of scope, in the
    lookups' terms), so every one served is a wrong hit."""
    cache = simulate.warm(corpus.train, cfg.per_intent, cfg.seed)
    policy = provisional(projection, cfg)
    return simulate.pooled(ABSENT, [simulate.replay(ABSENT, policy, rest, asked, vectors, cfg.top_k) for rest, asked
                                    in simulate.answers_taken_out(cache, fold_questions(corpus, fold, index))])


ABSENT = "answer not cached (unseen domains, cross-fitted)"


def absent_draw(in_scope: int, available: int, share: float, seed: int) -> np.ndarray:
    """Which of `available` absent-answer lookups (indices, drawn at random) join `in_scope` ones so that they make
    `share` of both together (all there are, at most): a cache where that share of the questions have no answer."""
    n = min(available, round(share / (1 - share) * in_scope)) if share > 0 else 0
    return np.random.default_rng(seed).choice(available, size=n, replace=False)


def with_absent(lookups: simulate.Lookups, absent: simulate.Lookups, share: float, seed: int) -> simulate.Lookups:
    """The lookups and a share of absent-answer ones (`absent_draw`) mixed in."""
    if share <= 0 or not len(absent):
        return lookups
    rows = np.zeros(len(absent), bool)
    rows[absent_draw(int(lookups.relevant.sum()), len(absent), share, seed)] = True
    return simulate.pooled(lookups.name, [lookups, absent.part(rows, absent.name)])


def bounded(served: np.ndarray, wrong: np.ndarray, target: float, z: float) -> bool:
    n = int(served.sum())
    return n > 0 and wilson_upper(np.array([(served & wrong).sum()]), np.array([n]), z)[0] <= target


def out_of_scope_bounded(served: np.ndarray, lookups: simulate.Lookups, target: float, z: float) -> bool:
    """The share of out-of-scope lookups (no right answer cached) served stays within target at the bound: they are
    a small part of the pooled lookups, and a loose cut serves them far more often than it serves wrong answers to
    in-scope questions."""
    outside = ~lookups.relevant
    return not outside.any() or \
        wilson_upper(np.array([(served & outside).sum()]), np.array([outside.sum()]), z)[0] <= target


def logit_floors(lookups: simulate.Lookups) -> list[float | None]:
    """The verifier floors a cut is tried with: none, and the logits below which a share (0 to 50%) of the right
    servable candidates fall (only the first when the lookups were not scored)."""
    if lookups.logit is None:
        return [None]
    right = lookups.logit[lookups.right & (lookups.tuned > -1)]
    return [None, *dict.fromkeys(float(v) for v in np.round(np.quantile(right, LOGIT_SHARES), 2))] \
        if len(right) else [None]


LOGIT_SHARES = np.linspace(0.0, 0.5, 21)


def fit_rivalled(sets: list[simulate.Lookups], target: float, z: float) -> tuple[float, float, float | None]:
    """The (cosine, margin, verifier floor) serving the most lookups of the first set that retrieved another
    answer, within target on every set (customer intents and general questions must both hold it). With scored
    lookups a floor on the verifier's logit may buy a looser cosine and margin (it gates every lookup but the same
    words, as the policy does), but only where the first set's out-of-scope lookups stay served at most the target's
    share (at the bound): the margin is what keeps them out, and the verifier, reading two questions, barely does."""
    best, served_most = (NEVER.cosine, NEVER.margin, None), 0      # a cut that serves nothing is never fitted
    for logit in logit_floors(sets[0]):
        gate = [s.verified(logit) for s in sets]
        for cosine in COSINES:
            above = [s.tuned >= cosine for s in sets]
            for margin in MARGINS:
                served = [s.always | (g & ((s.wording & a) | (s.rivalled & a & (s.margin >= margin))))
                          for s, a, g in zip(sets, above, gate)]
                n = int(served[0].sum())
                if n > served_most and (logit is None or out_of_scope_bounded(served[0], sets[0], target, z)) and \
                        all(bounded(v, ~s.right, target, z) or not v.any() for s, v in zip(sets, served)):
                    best, served_most = (float(cosine), float(margin), logit), n
    return best


def fit_lone(sets: list[simulate.Lookups], target: float, z: float, logit: float | None = None) -> float:
    """The lowest cosine at which lookups without a rival (pooled over the sets) stay within target, behind the
    verifier's floor `logit` when the cut has one."""
    lone = [~s.rivalled & ~s.wording for s in sets]        # the same wording is decided by the rivalled cut
    tuned = np.concatenate([s.tuned[k] for s, k in zip(sets, lone)])
    always = np.concatenate([s.always[k] for s, k in zip(sets, lone)])
    gate = np.concatenate([s.verified(logit)[k] for s, k in zip(sets, lone)])
    wrong = ~np.concatenate([s.right[k] for s, k in zip(sets, lone)])
    for cosine in COSINES:
        if bounded(always | (gate & (tuned >= cosine)), wrong, target, z):
            return float(cosine)
    return NEVER.lone


def fit_cuts(intents: simulate.Lookups, pairs: simulate.Lookups, general: simulate.Lookups,
             cfg: TrainSettings) -> dict[float, Cut]:
    """Per target: the rivalled cut from the cross-fitted intent lookups; the lone cut from every lookup without a
    rival, with the held-apart Quora pairs (pair mode: never a rival) and Quora questions looked up among their
    partners. The rivalled cut is not held on the Quora cache: no cut of this embedder holds 2% there (20% wrong
    at a tuned cosine of 0.95, many of them unlabeled true duplicates), and holding it would serve nothing; the
    figures report it, and verified hits (`cachegate.verified`) hold each namespace's rate in production. With
    scored lookups (a verifier) the floor on its logit is fitted with the rivalled cut and gates the lone cut too."""
    z = z_for(cfg.confidence)
    cuts = {}
    for t in sorted(set(TARGETS) | {cfg.target}):
        cosine, margin, logit = fit_rivalled([intents], t, z)
        cuts[t] = Cut(cosine, margin, fit_lone([intents, pairs, general], t, z, logit), logit)
    return cuts


def figures(lookups: simulate.Lookups, cut: Cut) -> dict:
    served = lookups.served(cut)
    n, relevant = int(served.sum()), int(lookups.relevant.sum())
    right = int((served & lookups.right).sum())
    return {"lookups": len(lookups), "served": n, "wrong": n - right,
            "served_rate": round(n / max(len(lookups), 1), 4),
            "hit_rate": round(right / relevant, 4) if relevant else 0.0,
            "false_hit_rate": round((n - right) / n, 4) if n else 0.0}


def write_matcher(out: Path, cfg: TrainSettings, cuts: dict[float, Cut], fitted: dict) -> None:
    decision = {"thresholds": {f"{t:g}": c._asdict() for t, c in cuts.items()},
                "target_false_hit_rate": cfg.target, "min_cosine": cfg.min_cosine, "top_k": cfg.top_k}
    gate = ContextGate(**packaged_policy().get("context_gate", {}))
    matcher = {"kind": "matcher", "evidence": list(EVIDENCE), "decision": decision,
               "context_gate": {"min_similarity": gate.min_similarity}, "fitted": fitted}
    (out / "matcher.json").write_text(json.dumps(matcher, indent=1) + "\n")
