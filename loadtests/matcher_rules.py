"""`python -m loadtests.matcher_rules [--quick] [--embedding-cache DIR]`: decision rules over the matcher's
cross-fitted lookups, each judged on domains its cut never saw.

`cachegate train matcher` fits one cut (a tuned cosine and a margin) on the pooled lookups of five folds of CLINC
domains, each replayed through a projection trained without them. Whether a rule's cut *carries* to a new domain
is what matters, so here every rule is fitted on four folds and judged on the fifth (leave one fold out), on the
fold's val lookups (with its share of out-of-scope questions) and on its CLINC `test` questions; then fitted on
all five and judged on CLINC `test` with `oos_test` through a projection trained on every domain (the shipped
recipe, retrained here), its tier warmed as `cachegate eval semantic` warms it. Rules (each serves the same words, and decides lookups that retrieved another answer; lone lookups miss):
- `cosine+margin`: the shipped rule, the grid of `cachegate.matcher_train.fitting`; `@0.75`, `@0.9`: its false-hit
  rate held at a one-sided Wilson bound of that confidence instead of the point estimate;
- `backed`: that cut, or a looser one when at least S other retrieved entries share the best entry's answer (a
  cache with several questions per answer: intents, a curated library's example questions);
- `logistic`: a logistic regression on (tuned cosine, margin, support), its floor fitted on out-of-fold scores;
- `logistic-plain`: the same on (tuned cosine, margin, plain cosine, plain margin): no support, as a cache of one
  question per answer (generated answers) would see it;
- `radius`: a threshold per entry: the shipped rule, and the question closer to the entry (tuned cosine) than the
  entry is to its own closest entry of another answer in the cache, by at least d (fitted with the cut); it reads
  nothing a cache of one question per answer lacks.
Each left-out fold is also judged on its val questions looked up with their own intent's entries taken out of the
cache (`absent`): a question whose answer is not cached while its neighbours' are, the lookup a live cache makes
most often, where every hit is wrong. `--absent-share S` fits every rule on folds where a share S of the lookups
are such questions (at most 0.5: each in-scope val question once with its answer, once without), the cache a
customer actually has.
`--seeds 0,1,2` trains every projection once per seed and averages them (a soup of the seeds).
Prints a table, writes JSON and a PNG.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FEATURES = ("tuned", "margin", "plain", "plain_margin", "support", "neighbour")
NOTHING_FOUND = [-1.0, -2.0, -1.0, -2.0, 0.0, 1.0]
SUPPORTS = (1, 2, 3, 4)
BACKED_MARGINS = np.round(np.arange(-0.10, 0.30, 0.01), 2)
RADII = np.round(np.arange(-0.30, 0.31, 0.02), 2)


@dataclass(frozen=True)
class Looked:
    """Per lookup: the evidence of its best servable candidate (`FEATURES`) and how the cut reads it."""
    x: np.ndarray            # (n, len(FEATURES))
    rivalled: np.ndarray     # another answer retrieved
    always: np.ndarray       # the same words
    wording: np.ndarray      # the same wording (the cosine alone decides)
    right: np.ndarray
    relevant: np.ndarray     # a right answer is cached (else out of scope)

    def __len__(self) -> int:
        return len(self.right)

    def col(self, name: str) -> np.ndarray:
        return self.x[:, FEATURES.index(name)]


def joined(parts: list[Looked]) -> Looked:
    return Looked(*(np.concatenate([getattr(p, f) for p in parts]) for f in Looked.__dataclass_fields__))


def evidence_features(tuned: np.ndarray, plain: np.ndarray, answers: list[str], best: int) -> list[float]:
    """The best servable candidate's features: its tuned cosine and margin over the closest other answer (by tuned
    cosine), the same two by plain cosine, and how many other retrieved entries share its answer."""
    other = [k for k, a in enumerate(answers) if a != answers[best]]
    rival = max((tuned[k] for k in other), default=0.0)
    plain_rival = max((plain[k] for k in other), default=0.0)
    support = sum(1 for k, a in enumerate(answers) if a == answers[best] and k != best)
    return [float(tuned[best]), float(tuned[best] - rival), float(plain[best]), float(plain[best] - plain_rival),
            float(support)]


def neighbours(policy, cache: list[tuple[str, str]], vectors) -> dict[str, float]:
    """Each cached question's tuned cosine to its closest entry of another answer in the cache: how far its answer
    reaches before another's begins (a store would keep it per entry, updated as entries come and go)."""
    tuned = np.stack([policy.tuned(vectors[t]) for t, _ in cache])
    sims = tuned @ tuned.T
    answers = np.array([a for _, a in cache])
    sims[answers[:, None] == answers[None, :]] = -1.0
    return dict(zip((t for t, _ in cache), sims.max(axis=1).tolist()))


def replay(policy, cache: list[tuple[str, str]], asked: list[tuple[str, str | None]], vectors, top_k: int) -> Looked:
    """Each question looked up as the tier does (`simulate.looked_up`: plain top-k, the policy's evidence and
    vetoes), keeping the features of its best servable candidate."""
    from cachegate.matcher_train.simulate import looked_up
    rows: dict[str, list] = {k: [] for k in Looked.__dataclass_fields__}
    reach = neighbours(policy, cache, vectors)
    for one in looked_up(policy, cache, asked, vectors, top_k):
        rows["relevant"].append(one.answer is not None)
        if one.evidence is None:
            rows["x"].append(NOTHING_FOUND)
            for k in ("rivalled", "always", "wording", "right"):
                rows[k].append(False)
            continue
        best = one.evidence.index
        rows["x"].append(evidence_features(one.tuned, one.plain, one.answers, best)
                         + [reach[one.found[best].entry_query]])
        rows["rivalled"].append(one.evidence.rival is not None)
        rows["always"].append(one.kind == "same words")
        rows["wording"].append(one.kind == "same wording")
        rows["right"].append(one.answer is not None and one.answers[best] == one.answer)
    return Looked(np.array(rows["x"], np.float32).reshape(-1, len(FEATURES)),
                  *(np.array(rows[k], bool) for k in ("rivalled", "always", "wording", "right", "relevant")))


def within(served: np.ndarray, looked: Looked, target: float, z: float = 0.0) -> bool:
    """The served lookups' false-hit rate holds the target (at a Wilson upper bound for z > 0)."""
    from policies.calibration import wilson_upper
    n = int(served.sum())
    return n > 0 and wilson_upper(np.array([(served & ~looked.right).sum()]), np.array([n]), z)[0] <= target


class CosineMargin:
    """The shipped rule: the tuned cosine at least c and the margin at least m (the same wording: the cosine alone),
    its false-hit rate held at the point estimate or, with `confidence` above 0.5, at a Wilson bound (`--confidence`
    of `cachegate train matcher`)."""

    def __init__(self, confidence: float = 0.5) -> None:
        from policies.calibration import z_for
        self.z = z_for(confidence)
        self.name = "cosine+margin" + (f"@{confidence:g}" if confidence > 0.5 else "")

    def fit(self, looked: Looked, target: float):
        from cachegate.matcher_train.fitting import COSINES, MARGINS
        best, most = (1.01, 1.01), 0
        for c in COSINES:
            for m in MARGINS:
                served = CosineMargin.served(looked, (c, m))
                if served.sum() > most and within(served, looked, target, self.z):
                    best, most = (float(c), float(m)), int(served.sum())
        return best

    @staticmethod
    def served(looked: Looked, cut) -> np.ndarray:
        c, m = np.float32(cut)      # the features' precision, whether the cut is a grid value or a float
        above = looked.col("tuned") >= c
        return looked.always | (looked.rivalled & above & ((looked.col("margin") >= m) | looked.wording))


class Backed(CosineMargin):
    """The shipped cut, or a looser (cosine, margin) where at least S other retrieved entries share the answer; the
    looser cut must also keep out-of-scope lookups served within the target."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "backed"

    def fit(self, looked: Looked, target: float):
        from cachegate.matcher_train.fitting import COSINES
        base = super().fit(looked, target)
        best = (base, 1.01, 1.01, 99)
        most = int(CosineMargin.served(looked, base).sum())
        outside = ~looked.relevant
        for s in SUPPORTS:
            for c in COSINES[::2]:
                for m in BACKED_MARGINS:
                    served = self.served(looked, (base, float(c), float(m), s))
                    if served.sum() > most and within(served, looked, target) and \
                            (served & outside).sum() <= target * max(int(outside.sum()), 1):
                        best, most = (base, float(c), float(m), s), int(served.sum())
        return best

    def served(self, looked: Looked, cut) -> np.ndarray:
        base, (c, m), s = cut[0], np.float32(cut[1:3]), cut[3]
        backed = looked.rivalled & (looked.col("support") >= s) & (looked.col("tuned") >= c) & \
            (looked.col("margin") >= m)
        return CosineMargin.served(looked, base) | backed


class Radius(CosineMargin):
    """A threshold per entry: the shipped rule, and the question's tuned cosine to the entry at least the entry's
    own to its closest other answer in the cache plus d; (cosine, margin, d) fitted together."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "radius"

    def fit(self, looked: Looked, target: float):
        from cachegate.matcher_train.fitting import COSINES, MARGINS
        best, most = (1.01, 1.01, 1.0), 0
        for d in RADII:
            for c in COSINES[::2]:
                for m in MARGINS[::2]:
                    served = self.served(looked, (c, m, d))
                    if served.sum() > most and within(served, looked, target):
                        best, most = (float(c), float(m), float(d)), int(served.sum())
        return best

    def served(self, looked: Looked, cut) -> np.ndarray:
        c, m, d = np.float32(cut)
        inside = looked.col("tuned") - looked.col("neighbour") >= d
        return looked.always | (CosineMargin.served(looked, (c, m)) & inside)


class Logistic:
    """P(right) from a logistic regression on some features; the floor is fitted on out-of-fold scores (each fold's
    lookups scored by a model fitted on the others), then the model is refitted on all of them."""

    def __init__(self, name: str, features: tuple[str, ...]) -> None:
        self.name, self.features = name, features

    def model(self, looked: Looked):
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        rows = looked.rivalled & ~looked.always
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000)).fit(
            self.matrix(looked)[rows], looked.right[rows])

    def matrix(self, looked: Looked) -> np.ndarray:
        return looked.x[:, [FEATURES.index(f) for f in self.features]]

    def score(self, model, looked: Looked) -> np.ndarray:
        return model.predict_proba(self.matrix(looked))[:, 1] if len(looked) else np.zeros(0)

    def fit_parts(self, parts: list[Looked], target: float):
        """(model, floor); with one part there is nothing to score it out of fold and the floor is in-sample."""
        everything = joined(parts)
        model = self.model(everything)
        scores = np.concatenate([self.score(self.model(joined(parts[:k] + parts[k + 1:])), p)
                                 for k, p in enumerate(parts)]) if len(parts) > 1 else self.score(model, everything)
        return model, self.floor(everything, scores, target)

    def floor(self, looked: Looked, scores: np.ndarray, target: float) -> float:
        best, most = 2.0, 0
        candidates = np.unique(np.round(scores[looked.rivalled], 4))
        for f in candidates[:: max(1, len(candidates) // 1000)]:
            served = looked.always | (looked.rivalled & (scores >= f))
            if served.sum() > most and within(served, looked, target):
                best, most = float(f), int(served.sum())
        return best

    def served_by(self, fitted, looked: Looked) -> np.ndarray:
        model, floor = fitted
        return looked.always | (looked.rivalled & (self.score(model, looked) >= floor))


def fit_rule(rule, parts: list[Looked], target: float):
    return rule.fit_parts(parts, target) if isinstance(rule, Logistic) else rule.fit(joined(parts), target)


def served_by(rule, fitted, looked: Looked) -> np.ndarray:
    return rule.served_by(fitted, looked) if isinstance(rule, Logistic) else rule.served(looked, fitted)


def figures(looked: Looked, served: np.ndarray) -> dict:
    n = int(served.sum())
    wrong = int((served & ~looked.right).sum())
    outside = ~looked.relevant
    return {"lookups": len(looked), "served": n, "wrong": wrong, "served_rate": round(n / max(len(looked), 1), 4),
            "false_hit_rate": round(wrong / n, 4) if n else 0.0,
            "out_of_scope_served": round(float(served[outside].mean()), 4) if outside.any() else None}


def with_absent(fold: Looked, gone: Looked, share: float, seed: int = 0) -> Looked:
    """The fold's lookups and a share of its absent-answer ones mixed in, drawn as `train matcher` draws them
    (`fitting.absent_draw`)."""
    from cachegate.matcher_train.fitting import absent_draw
    pick = absent_draw(int(fold.relevant.sum()), len(gone), share, seed)
    return joined([fold, Looked(*(getattr(gone, f)[pick] for f in Looked.__dataclass_fields__))])


def judged(rule, folds: list[Looked], held_tests: list[Looked], test: Looked | None, target: float,
           absent: list[Looked] | None = None, share: float = 0.0) -> dict:
    """Leave one fold out (val lookups, the fold's CLINC test questions and, given, its `absent` lookups), then all
    folds -> the shipped test; each fit reads the folds with `share` of absent-answer lookups mixed in."""
    fitted_on = [with_absent(f, a, share) for f, a in zip(folds, absent)] if absent and share > 0 else folds
    val, unseen, missing = [], [], []
    for k in range(len(folds)):
        fitted = fit_rule(rule, fitted_on[:k] + fitted_on[k + 1:], target)
        val.append(served_by(rule, fitted, folds[k]))
        unseen.append(served_by(rule, fitted, held_tests[k]))
        missing += [served_by(rule, fitted, absent[k])] if absent else []
    out = {"rule": rule.name,
           "unseen_val": figures(joined(folds), np.concatenate(val)),
           "unseen_test": figures(joined(held_tests), np.concatenate(unseen)),
           "per_fold_val": [figures(f, s) for f, s in zip(folds, val)]}
    if absent:
        out["unseen_absent"] = figures(joined(absent), np.concatenate(missing))
    if test is not None:
        fitted = fit_rule(rule, fitted_on, target)
        out["test_with_oos"] = figures(test, served_by(rule, fitted, test))
        out["fitted"] = repr(fitted) if not isinstance(rule, Logistic) else f"floor {fitted[1]:.4f}"
    return out


RULES = (CosineMargin(), CosineMargin(0.75), CosineMargin(0.9), Backed(), Logistic("logistic", ("tuned", "margin", "support")),
         Logistic("logistic-plain", ("tuned", "margin", "plain", "plain_margin")), Radius())


def table(results: list[dict]) -> str:
    header = ("| rule | unseen val (left-out fold): served, wrong, oos served | unseen test | CLINC test + oos | "
              "answer not cached (left-out fold): served |")
    lines = [header, "|---|---|---|---|---|"]

    def cell(f: dict | None) -> str:
        if f is None:
            return ""
        oos = f" (oos {f['out_of_scope_served']:.1%})" if f["out_of_scope_served"] is not None else ""
        return f"{f['served_rate']:.1%}, {f['false_hit_rate']:.2%}{oos}"
    for r in results:
        absent = f"{r['unseen_absent']['served_rate']:.1%}" if "unseen_absent" in r else ""
        lines.append(f"| {r['rule']} | {cell(r['unseen_val'])} | {cell(r['unseen_test'])} | "
                     f"{cell(r.get('test_with_oos'))} | {absent} |")
    return "\n".join(lines)


def plot(results: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sets = [("unseen_val", "unseen val (left-out fold)"), ("unseen_test", "unseen test"),
            ("test_with_oos", "CLINC test + oos")]
    colours = ("tab:blue", "tab:cyan", "tab:purple", "tab:orange", "tab:green", "tab:red", "tab:brown")
    fig, (ax, bars) = plt.subplots(1, 2, figsize=(11, 4.5), gridspec_kw={"width_ratios": [2, 1]})
    for (key, _), marker in zip(sets, "osD"):
        for r, colour in zip(results, colours):
            if key in r:
                ax.scatter(100 * r[key]["false_hit_rate"], 100 * r[key]["served_rate"], marker=marker, color=colour)
    ax.axvline(2.0, color="grey", linestyle=":")
    ax.set_xlabel("wrong, % of served")
    ax.set_ylabel("served, % of lookups")
    ax.set_title("decision rules fitted at 2%, judged where they were not fitted", fontsize=10)
    # colour: the rule (the bars name them); shape: the lookups judged
    ax.legend(handles=[plt.Line2D([], [], marker=m, color="grey", linestyle="", label=label)
                       for (_, label), m in zip(sets, "osD")], fontsize=7)
    with_absent = [(r["rule"], 100 * r["unseen_absent"]["served_rate"], c)
                   for r, c in zip(results, colours) if "unseen_absent" in r]
    bars.barh([n for n, _, _ in with_absent], [v for _, v, _ in with_absent], color=[c for *_, c in with_absent])
    bars.invert_yaxis()
    bars.set_xlabel("served (all wrong), % of lookups")
    bars.set_title("answer not cached, left-out fold", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def absent(policy, cache: list[tuple[str, str]], asked: list[tuple[str, str | None]], vectors, top_k: int) -> Looked:
    """The in-scope questions looked up, each against the cache without its own intent's entries: nothing cached is
    right for them (`right` and `relevant` all False), so every lookup served is a wrong hit."""
    from cachegate.matcher_train.simulate import answers_taken_out
    parts = [replay(policy, rest, questions, vectors, top_k) for rest, questions in answers_taken_out(cache, asked)]
    return joined(parts) if parts else Looked(np.zeros((0, len(FEATURES)), np.float32),
                                              *(np.zeros(0, bool) for _ in range(5)))


def soup(rows, vectors, cfg, scratch: str, seeds: tuple[int, ...]) -> np.ndarray:
    """The projection trained once per seed (the order and make-up of its batches) and averaged."""
    from dataclasses import replace

    from cachegate.matcher_train.retrieval import train_projection
    return np.mean([train_projection(rows, vectors, replace(cfg, seed=s), scratch) for s in seeds], axis=0)


def lookups(corpus, cfg, vectors, contrasts, train_rows, test_rows,
            seeds: tuple[int, ...] | None = None) -> tuple[list[Looked], list[Looked], list[Looked], Looked]:
    """Per fold, through a projection trained without it: its val + out-of-scope lookups, its CLINC test questions
    and its val questions with their answers taken out (`absent`); CLINC test with oos_test through a projection
    trained on every domain (each a `soup` of `seeds`)."""
    import tempfile

    from tqdm import tqdm

    from cachegate.evaluation.intents import warm_set
    from cachegate.matcher_train import fitting, simulate
    from cachegate.matcher_train.pairs import triplets
    domain_of, seeds = corpus.domain_of(), seeds or (cfg.seed,)
    cache = simulate.warm(corpus.train, cfg.per_intent, cfg.seed)
    folds, held, missing = [], [], []
    with tempfile.TemporaryDirectory() as scratch:
        for k, fold in enumerate(tqdm(corpus.folds, desc="folds", unit="fold")):
            rows, mine = corpus.outside(fold, contrasts)
            policy = fitting.provisional(soup(triplets(rows, corpus.qqp_train, vectors, cfg.seed) + mine,
                                              vectors, cfg, scratch, seeds), cfg)
            asked = fitting.fold_questions(corpus, fold, k)
            folds.append(replay(policy, cache, asked, vectors, cfg.top_k))
            missing.append(absent(policy, cache, asked, vectors, cfg.top_k))
            held.append(replay(policy, cache, [(t, i) for t, i in test_rows if domain_of.get(i) in fold], vectors,
                               cfg.top_k))
        policy = fitting.provisional(soup(triplets(corpus.train, corpus.qqp_train, vectors, cfg.seed) + contrasts,
                                          vectors, cfg, scratch, seeds), cfg)
    # as `cachegate eval semantic --intents` warms its tier: K per intent of the set's own train split
    test = replay(policy, warm_set(train_rows, cfg.per_intent, cfg.seed), test_rows, vectors, cfg.top_k)
    return folds, held, missing, test


def main(argv: list[str] | None = None) -> int:
    from cachegate.matcher_train import actions
    from cachegate.matcher_train import data as corpus_data
    from cachegate.matcher_train.command import PlainVectors
    from cachegate.matcher_train.settings import TrainSettings, quick
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(corpus_data.DEFAULT_DATA))
    p.add_argument("--quick", action="store_true", help="a slice of the data, one epoch: the pipeline, not figures")
    p.add_argument("--target", type=float, default=0.02)
    p.add_argument("--embedding-cache", help="folder to memoise plain embeddings in")
    p.add_argument("--absent-share", type=float, default=0.0,
                   help="fit on folds where this share of lookups (at most 0.5) have no answer cached")
    p.add_argument("--seeds", default="0", help="train each projection once per seed and average them: 0,1,2")
    p.add_argument("--out", default="loadtests/out/matcher_rules")
    args = p.parse_args(argv)
    import torch
    torch.set_num_threads(2)
    started = time.perf_counter()
    cfg = quick(TrainSettings()) if args.quick else TrainSettings()
    corpus = corpus_data.load_corpus(Path(args.data), corpus_data.QUICK if args.quick else corpus_data.FULL, [],
                                     cfg.seed)
    clinc = json.loads((Path(args.data) / "intents" / "clinc150.json").read_text())
    intents = {i for _, i in corpus.train}
    test_rows = [(t, i) for t, i in clinc["test"] if i in intents] + [(t, None) for t, _ in clinc["oos_test"]]
    test_rows = test_rows[:: 20] if args.quick else test_rows
    contrasts = actions.minimal_pairs(corpus.train, cfg.seed)
    vectors = PlainVectors(args.embedding_cache)(corpus.texts() + actions.texts(contrasts) +
                                                 [t for t, _ in test_rows] + [t for t, _ in clinc["train"]])
    train_rows = [(t, i) for t, i in clinc["train"] if i in intents]
    seeds = tuple(int(s) for s in args.seeds.split(","))
    folds, held, missing, test = lookups(corpus, cfg, vectors, contrasts, train_rows, test_rows, seeds)
    results = [judged(rule, folds, held, test, args.target, missing, args.absent_share) for rule in RULES]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"target": args.target, "quick": args.quick, "seeds": list(seeds), "absent_share": args.absent_share,
              "seconds": round(time.perf_counter() - started, 1), "results": results}
    (out / "matcher_rules.json").write_text(json.dumps(report, indent=1) + "\n")
    plot(results, out / "matcher_rules.png")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
