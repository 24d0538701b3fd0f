"""`python -m loadtests.matcher_heads [--heads linear,mlp,rich,lowrank16,lowrank64] [--quick]`: heads of more or
less capacity than the matcher's linear projection on the frozen MiniLM, and other recipes for training it,
cross-fitted the way `cachegate train matcher` fits its cut, side by side.

Every head is trained with the same triplets (the minimal pairs on the action verb included) and loss (MNRL with
a mined hard negative, batches free of same-intent rows, 5 epochs) by one small loop; per fold of domains a head trained without them replays the fold's
val questions (and a share of out-of-scope ones), the cut is fitted on those pooled unseen-domain lookups, and a
head trained on every domain replays CLINC `test` with its `oos_test` lookups. Retrieval stays plain MiniLM cosine
(what the tier's index holds); only the candidates' tuned cosines come from the head. Heads:
- `linear`: the shipped projection (a 384 x 384 map from the identity);
- `mlp`: the projection plus a residual 384 -> 768 -> 384 GELU network (zero-initialised);
- `rich`: a linear map of richer frozen features, [the vector, mean of layer 3, max of layer 6] (1,152 dims);
- `lowrankR`: the identity plus a rank-R update.
A recipe after `@` changes how a head is trained (`Recipe`): `linear@scale30` (MNRL's scale), `@symmetric` (the
loss both ways: positives also find their anchors), `@epochs10`, `@batch512`, `@lr0.002`, `@remine` (hard
negatives mined again with the trained head, then trained afresh on both sets).
Prints a table, writes JSON and a PNG.
"""
from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

CUT_TARGETS = (0.01, 0.02)
SETS = ("unseen", "out_of_scope", "test_in_scope", "test_with_oos")


@dataclass(frozen=True)
class Recipe:
    """How a head is trained, beyond `TrainSettings`: MNRL's scale, the loss both ways, hard negatives re-mined."""
    scale: float = 20.0
    symmetric: bool = False
    remine: bool = False
    settings: tuple[tuple[str, float], ...] = ()     # TrainSettings overrides: epochs, batch, lr

    @classmethod
    def parse(cls, spec: str) -> tuple[str, Recipe]:
        """"linear@scale30" -> ("linear", Recipe(scale=30)); several recipes join with "+"."""
        kind, _, rest = spec.partition("@")
        recipe = cls()
        for part in filter(None, rest.split("+")):
            if part == "symmetric" or part == "remine":
                recipe = replace(recipe, **{part: True})
            elif part.startswith("scale"):
                recipe = replace(recipe, scale=float(part.removeprefix("scale")))
            elif part.startswith(("epochs", "batch", "lr")):
                name = next(n for n in ("epochs", "batch", "lr") if part.startswith(n))
                recipe = replace(recipe, settings=recipe.settings + ((name, float(part.removeprefix(name))),))
            else:
                raise SystemExit(f"unknown recipe {part!r} in {spec!r}")
        return kind, recipe

    def applied(self, cfg):
        fields = {"epochs": "projection_epochs", "batch": "projection_batch", "lr": "projection_lr"}
        return replace(cfg, **{fields[k]: (int(v) if k == "batch" else v) for k, v in self.settings})


def head_module(kind: str, d_in: int, dim: int = 384):
    """The head as a torch module: unit vectors out; every kind starts as the plain vector (its first `dim`
    features), so training moves away from plain MiniLM cosine, as the shipped projection does."""
    import torch
    import torch.nn.functional as F

    class Head(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.kind = kind
            self.linear = torch.nn.Linear(d_in, dim, bias=False)
            with torch.no_grad():
                self.linear.weight.zero_()
                self.linear.weight[:, :dim] = torch.eye(dim)
            if kind.startswith("lowrank"):
                rank = int(kind.removeprefix("lowrank"))
                self.linear.weight.requires_grad_(False)
                self.up = torch.nn.Parameter(torch.zeros(dim, rank))
                self.down = torch.nn.Parameter(torch.randn(rank, d_in) * 0.01)
            if kind == "mlp":
                self.hidden = torch.nn.Linear(d_in, 2 * dim)
                self.out = torch.nn.Linear(2 * dim, dim)
                torch.nn.init.zeros_(self.out.weight)
                torch.nn.init.zeros_(self.out.bias)

        def forward(self, x):
            y = self.linear(x)
            if self.kind.startswith("lowrank"):
                y = y + (x @ self.down.T) @ self.up.T
            if self.kind == "mlp":
                y = y + self.out(F.gelu(self.hidden(x)))
            return F.normalize(y, dim=-1)

    return Head()


def train_head(kind: str, rows, features: dict[str, np.ndarray], cfg, epochs: float, scale: float = 20.0,
               symmetric: bool = False):
    """MNRL over (anchor, positive, hard negative) rows, AdamW with 5% warm-up and linear decay; `symmetric` adds
    the loss the other way (each positive finds its anchor among the batch's anchors)."""
    import torch
    import torch.nn.functional as F

    from cachegate.matcher_train.pairs import DistinctGroupBatches
    torch.manual_seed(cfg.seed)
    row_of = {t: i for i, t in enumerate(features)}
    table = torch.tensor(np.stack(list(features.values())), dtype=torch.float32)
    head = head_module(kind, table.shape[1])
    columns = [torch.tensor([row_of[getattr(r, side)] for r in rows]) for side in ("anchor", "positive", "negative")]
    batches = DistinctGroupBatches([r.group for r in rows], cfg.projection_batch, cfg.seed)
    steps = max(1, int(epochs * len(batches)))
    warm = max(1, int(0.05 * steps))
    optimiser = torch.optim.AdamW([p for p in head.parameters() if p.requires_grad], lr=cfg.projection_lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
    step, epoch = 0, 0
    while step < steps:
        batches.set_epoch(epoch)
        for batch in batches:
            if step == steps:
                break
            b = torch.tensor(batch)
            anchor, positive, negative = (head(table[c[b]]) for c in columns)
            target = torch.arange(len(batch))
            loss = F.cross_entropy(scale * anchor @ torch.cat([positive, negative]).T, target)
            if symmetric:
                loss = (loss + F.cross_entropy(scale * positive @ anchor.T, target)) / 2
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            step += 1
        epoch += 1
    return head.eval()


def tuned_vectors(head, features: dict[str, np.ndarray], texts: list[str]) -> dict[str, np.ndarray]:
    import torch
    with torch.no_grad():
        out = head(torch.tensor(np.stack([features[t] for t in texts]), dtype=torch.float32)).numpy()
    return dict(zip(texts, out))


def rich_features(texts: list[str], batch: int = 256) -> dict[str, np.ndarray]:
    """[the plain vector, mean of layer 3, max of layer 6], each unit length, from the packaged MiniLM."""
    import torch
    from sentence_transformers import SentenceTransformer
    from tqdm import tqdm

    from cachegate.cache.semantic.embedder import PACKAGED, resolve_path
    model = SentenceTransformer(resolve_path(PACKAGED), device="cpu")
    tokenizer, encoder = model.tokenizer, model[0].auto_model
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), 3 * encoder.config.hidden_size), np.float32)
    unit = torch.nn.functional.normalize
    with torch.inference_mode():
        for start in tqdm(range(0, len(order), batch), desc="rich features", unit="batch"):
            picked = order[start: start + batch]
            f = tokenizer([texts[i] for i in picked], padding=True, truncation=True, max_length=256,
                          return_tensors="pt")
            states = encoder(**f, output_hidden_states=True).hidden_states
            mask = f["attention_mask"].unsqueeze(-1).float()
            mean = [(h * mask).sum(1) / mask.sum(1).clamp(min=1e-9) for h in (states[-1], states[3])]
            peak = states[-1].masked_fill(mask == 0, -1e4).max(1).values
            out[picked] = torch.cat([unit(mean[0], dim=-1), unit(mean[1], dim=-1), unit(peak, dim=-1)], -1).numpy()
    return dict(zip(texts, out))


def remined(head, rows, plain, features, cfg) -> list:
    """One more triplet per question: a paraphrase and one of its 3 nearest other-intent questions by `head`."""
    from cachegate.matcher_train.pairs import Triplet, by_intent, nearest_others, other_question
    texts = sorted({t for t, _ in rows})
    near = nearest_others(rows, tuned_vectors(head, features, texts), 3)
    rng, intents = random.Random(cfg.seed + 1), by_intent(rows)
    return [Triplet(t, other_question(rng, intents[i], t), rng.choice(near[r]), i)
            for r, (t, i) in enumerate(rows) if len(intents[i]) > 1 and near[r]]


def trained(spec: str, rows, contrasts, corpus, plain, features, cfg, epochs: float):
    """A head trained by its recipe on `rows` (and the Quora pairs and minimal pairs given)."""
    from cachegate.matcher_train.pairs import triplets
    kind, recipe = Recipe.parse(spec)
    cfg = recipe.applied(cfg)
    epochs = dict(recipe.settings).get("epochs", epochs)
    examples = triplets(rows, corpus.qqp_train, plain, cfg.seed) + contrasts
    head = train_head(kind, examples, features, cfg, epochs, recipe.scale, recipe.symmetric)
    if recipe.remine:
        head = train_head(kind, examples + remined(head, rows, plain, features, cfg), features, cfg, epochs,
                          recipe.scale, recipe.symmetric)
    return head


def study(kind: str, corpus, test: list[tuple[str, str | None]], plain, features, cfg, epochs: float,
          contrasts: list | None = None) -> dict:
    """One head (with its recipe): its cut per target fitted on cross-fitted unseen-domain lookups, and the
    figures at each. `contrasts`: the minimal pairs on the action verb (each fold gets those of other domains)."""
    from cachegate.matcher_train import fitting, simulate
    contrasts = contrasts or []
    started = time.perf_counter()
    identity = np.eye(len(next(iter(plain.values()))), dtype=np.float32)
    policy = fitting.provisional(identity, cfg)
    cache = simulate.warm(corpus.train, cfg.per_intent, cfg.seed)
    parts = []
    texts = sorted(plain)
    for k, fold in enumerate(corpus.folds):
        rows, fold_contrasts = corpus.outside(fold, contrasts)
        head = trained(kind, rows, fold_contrasts, corpus, plain, features, cfg, epochs)
        parts.append(fitting.fold_lookups(corpus, fold, k, plain, identity, cfg,
                                          tuned_vectors(head, features, texts)))
    unseen = simulate.pooled("unseen", parts)
    head = trained(kind, corpus.train, contrasts, corpus, plain, features, cfg, epochs)
    carried = tuned_vectors(head, features, texts)
    quora = simulate.pairs("quora", policy, corpus.qqp_held, plain, carried)
    general = simulate.pair_cache("general", policy, corpus.qqp_held, plain, cfg.top_k, carried)
    cuts = fitting.fit_cuts(unseen, quora, general, cfg)
    tested = simulate.replay("test", policy, cache, test, plain, cfg.top_k, carried)
    out: dict = {"head": kind, "seconds": round(time.perf_counter() - started, 1)}
    for target in CUT_TARGETS:
        cut = cuts[target]
        sets = {"unseen": unseen.part(unseen.relevant, "unseen"),
                "out_of_scope": unseen.part(~unseen.relevant, "out_of_scope"),
                "test_in_scope": tested.part(tested.relevant, "test_in_scope"), "test_with_oos": tested}
        out[f"{target:g}"] = {"cut": cut._asdict(), **{name: fitting.figures(s, cut) for name, s in sets.items()}}
    return out


def table(results: list[dict]) -> str:
    lines = ["| head | target | unseen served, wrong | oos served | test in scope | test with oos |",
             "|---|---|---|---|---|---|"]
    for r in results:
        for target in CUT_TARGETS:
            f = r[f"{target:g}"]
            cell = [f"{f[s]['served_rate']:.1%}, {f[s]['false_hit_rate']:.2%}" for s in SETS]
            lines.append(f"| {r['head']} | {target:g} | {cell[0]} | {f['out_of_scope']['served_rate']:.1%} | "
                         f"{cell[2]} | {cell[3]} |")
    return "\n".join(lines)


def plot(results: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, name in zip(axes, ("unseen", "test_with_oos")):
        for r in results:
            xs = [r[f"{t:g}"][name]["false_hit_rate"] * 100 for t in CUT_TARGETS]
            ys = [r[f"{t:g}"][name]["served_rate"] * 100 for t in CUT_TARGETS]
            ax.plot(xs, ys, marker="o", label=r["head"])
        ax.set(title=f"{name} (cuts at 1% and 2%)", xlabel="wrong of served (%)", ylabel="served (%)")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    from cachegate.matcher_train import actions
    from cachegate.matcher_train import data as corpus_data
    from cachegate.matcher_train.command import PlainVectors
    from cachegate.matcher_train.settings import TrainSettings
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--heads", default="linear,mlp,rich,lowrank16,lowrank64",
                   help="head kinds, each with an optional recipe: linear@scale30, linear@symmetric, linear@remine, "
                        "linear@epochs10, linear@batch512, linear@lr0.002 (joined with +)")
    p.add_argument("--data", default=str(corpus_data.DEFAULT_DATA))
    p.add_argument("--epochs", type=float, default=TrainSettings.projection_epochs)
    p.add_argument("--quick", action="store_true", help="the CI slice of `train matcher --quick`")
    p.add_argument("--embedding-cache", help="memo folder for the plain embeddings")
    p.add_argument("--out", default="matcher-heads")
    args = p.parse_args(argv)
    import torch
    torch.set_num_threads(2)
    cfg = TrainSettings()
    corpus = corpus_data.load_corpus(Path(args.data), corpus_data.QUICK if args.quick else corpus_data.FULL, [],
                                     cfg.seed)
    clinc = json.loads((Path(args.data) / "intents" / "clinc150.json").read_text())
    intents = set(corpus.domain_of())
    test = [(t.strip(), i) for t, i in clinc["test"] if i in intents]
    test += [(t.strip(), None) for t, _ in clinc["oos_test"]][: len(test) // 4 or 1]
    contrasts = actions.minimal_pairs(corpus.train, cfg.seed)
    texts = sorted(set(corpus.texts()) | {t for t, _ in test} | set(actions.texts(contrasts)))
    plain = PlainVectors(args.embedding_cache)(texts)
    heads = [h.strip() for h in args.heads.split(",") if h.strip()]
    rich = rich_features(texts) if any(Recipe.parse(h)[0] == "rich" for h in heads) else None
    results = []
    for n, h in enumerate(heads, 1):
        results.append(study(h, corpus, test, plain, rich if Recipe.parse(h)[0] == "rich" else plain, cfg,
                             args.epochs, contrasts))
        print(f"[{n}/{len(heads)}] {h}: {results[-1]['seconds']} s", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "matcher_heads.json").write_text(json.dumps(results, indent=1) + "\n")
    plot(results, out / "matcher_heads.png")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
