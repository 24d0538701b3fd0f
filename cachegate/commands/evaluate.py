"""`cachegate eval semantic`: how often the semantic tier serves the right answer, and how often a wrong one.

Pair mode asks the policy about each labeled row; cache mode stores every question1 and looks every
question2 up through the real tier; intent mode (`cachegate.evaluation.intents`) warms K questions per intent
and looks the rest up; multi-turn mode checks follow-ups never cross conversations.
"""
from __future__ import annotations

import argparse
import asyncio
import json

from cachegate.cache.semantic import datasets
from cachegate.cache.semantic.embedder import PACKAGED, Embedder
from cachegate.cache.semantic.tier import SemanticTier
from cachegate.evaluation import intents
from cachegate.evaluation.modes import (
    cache_mode,
    conversation_contexts,
    multiturn_mode,
    pair_mode,
    paraphrase_mode,
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pairs", help="CSV with question1,question2,is_duplicate")
    p.add_argument("--multiturn", help="multi-turn JSON (question, answer, follow-up, answer)")
    p.add_argument("--paraphrases", help="paraphrase JSON (origin, similar): hit rate on easy matches, against "
                                         "unrelated pairs (and the --pairs file's non-duplicates)")
    p.add_argument("--intents", help="intent JSON (train, test, oos_test: [[text, intent], ...]): intent mode")
    p.add_argument("--per-intent", type=int, default=5, help="intent mode: questions per intent warmed from train")
    p.add_argument("--domains", help="intent mode: only these domains' intents (comma-separated)")
    p.add_argument("--domain-file", help="intent mode: {domain: [intent, ...]} (default: *domains.json beside it)")
    p.add_argument("--no-oos", action="store_true", help="intent mode: leave the oos_test lookups out")
    p.add_argument("--seed", type=int, default=0, help="intent mode: which questions (and intents) warm the cache")
    p.add_argument("--coverage", type=float, default=1.0,
                   help="intent mode: share of the intents warmed, as in a cache still filling (the others' questions "
                        "are looked up too, and anything served to them is wrong)")
    p.add_argument("--policy", default="packaged", help="'packaged', 'cosine' or a policy file")
    p.add_argument("--threshold", type=float, default=0.9, help="threshold when --policy cosine")
    p.add_argument("--no-cache-mode", action="store_true", help="pair mode only (faster)")
    p.add_argument("--embedding-cache", help="folder to memoise embeddings in")
    p.add_argument("--json", action="store_true", help="print one JSON line")


def run(args: argparse.Namespace) -> int:
    if not args.pairs and not args.multiturn and not args.paraphrases and not args.intents:
        raise SystemExit("give --pairs FILE.csv, --paraphrases FILE.json, --intents FILE.json and/or --multiturn FILE.json")
    if not 0.0 < args.coverage <= 1.0:
        raise SystemExit(f"--coverage is a share of the intents in (0, 1], not {args.coverage}")
    embedder = Embedder(PACKAGED, cache_size=10 ** 7)
    report: dict = {"policy": args.policy, "embedder_precision": embedder.precision}
    if args.pairs:
        pairs = datasets.read_pairs_csv(args.pairs)
        vectors = datasets.embed_all(embedder, [t for p in pairs for t in (p.a, p.b)], args.embedding_cache)
        embedder.cache.update(vectors)
        tier = make_tier(args, embedder)
        pair = pair_mode(tier.policy, pairs, vectors, tier.verifier)
        report |= {k: pair[k] for k in ("hit_rate", "false_hit_rate", "cosine_hit_rate_at_same_false_hit_rate")}
        report["pair"] = pair
        if not args.no_cache_mode:
            report["cache"] = asyncio.run(cache_mode(make_tier(args, embedder), pairs))
    if args.paraphrases:
        report["paraphrases"] = run_paraphrases(args, embedder)
    if args.intents:
        report["intents"] = run_intents(args, embedder)
        if not args.pairs:
            report |= {k: report["intents"][k] for k in ("hit_rate", "false_hit_rate")}
    if args.multiturn:
        conversations = datasets.read_conversations(args.multiturn)
        texts = [t for c in conversations for t in (c.question, c.follow_up)] + conversation_contexts(conversations)
        embedder.cache.update(datasets.embed_all(embedder, texts, args.embedding_cache))
        report["multiturn"] = asyncio.run(multiturn_mode(make_tier(args, embedder), conversations))
    print(json.dumps(report) if args.json else table(report))
    return 0


def make_tier(args: argparse.Namespace, embedder: Embedder) -> SemanticTier:
    from cachegate.build_parts import build_semantic_store, build_semantic_tier
    from cachegate.settings import load_settings
    settings = load_settings(env={}, overrides={"cache": {"semantic": {
        "policy": args.policy, "threshold": args.threshold, "max_entries": 10 ** 7, "max_bytes": 1 << 40}}})
    return build_semantic_tier(settings, build_semantic_store(settings), embedder)


# -- paraphrase mode ------------------------------------------------------------------------------
def run_paraphrases(args: argparse.Namespace, embedder: Embedder) -> dict:
    from cachegate.commands.calibrate import with_negatives
    pairs = with_negatives(datasets.read_paraphrases(args.paraphrases), seed=0)
    hard = [p for p in datasets.read_pairs_csv(args.pairs) if not p.duplicate] if args.pairs else []
    vectors = datasets.embed_all(embedder, [t for p in pairs + hard for t in (p.a, p.b)], args.embedding_cache)
    tier = make_tier(args, embedder)
    return paraphrase_mode(tier.policy, pairs, hard, vectors, tier.verifier)


# -- intent mode -----------------------------------------------------------------------------------
def run_intents(args: argparse.Namespace, embedder: Embedder) -> dict:
    domains = [d.strip() for d in args.domains.split(",")] if args.domains else None
    data = intents.read_intents(args.intents, domains, args.domain_file)
    texts = [t for t, _ in data.train + data.test] + data.oos_test
    embedder.cache.update(datasets.embed_all(embedder, texts, args.embedding_cache))
    report = asyncio.run(intents.intent_mode(make_tier(args, embedder), data, args.per_intent, args.seed,
                                             not args.no_oos, args.coverage))
    return report | ({"domains": domains} if domains else {})


# -- printing -------------------------------------------------------------------------------------
def table(report: dict) -> str:
    lines = [f"policy: {report['policy']}, embedder in {report['embedder_precision']}"]
    if "pair" in report:
        p = report["pair"]
        lines += [f"pair mode ({p['rows']} rows, {p['duplicates']} duplicates)",
                  f"  {'decision':<26}{'hit_rate':>10}{'false_hit_rate':>16}{'hits':>8}",
                  f"  {'shipped policy':<26}{p['hit_rate']:>10.4f}{p['false_hit_rate']:>16.4f}{p['hits']:>8}"]
        for t, r in p["cosine"].items():
            lines.append(f"  {'cosine >= ' + t:<26}{r['hit_rate']:>10.4f}{r['false_hit_rate']:>16.4f}{r['hits']:>8}")
        lines.append(f"  {'cosine at same FHR':<26}{p['cosine_hit_rate_at_same_false_hit_rate']:>10.4f}"
                     f"{p['false_hit_rate']:>16.4f}  (threshold {p['cosine_threshold_at_same_false_hit_rate']:.3f})")
    if "cache" in report:
        c = report["cache"]
        lines += [f"cache mode ({c['entries']} entries, {c['lookups']} lookups through the tier)",
                  (f"  hit_rate {c['hit_rate']:.4f}  hits {c['hits']}: partner {c['partner_hits']}, labeled "
                   f"non-duplicate {c['labeled_non_duplicate_hits']}, other entries {c['other_entry_hits']}"
                   f"  (labeled false_hit_rate {c['false_hit_rate_labeled']:.4f})")]
    if "paraphrases" in report:
        e = report["paraphrases"]
        lines += [(f"paraphrase mode ({e['paraphrases']} paraphrases, {e['unrelated_pairs']} unrelated pairs,"
                   f" {e['hard_negatives']} hard negatives)"),
                  (f"  hit_rate {e['hit_rate']:.4f}  false hits: unrelated {e['unrelated_false_hits']},"
                   f" hard {e['hard_false_hits']}  (false_hit_rate {e['false_hit_rate']:.4f})")]
    if "intents" in report:
        lines += intent_lines(report["intents"])
    if "multiturn" in report:
        m = report["multiturn"]
        lines += [f"multi-turn mode ({m['conversations']} conversations)",
                  f"  follow-ups served from another conversation: {m['follow_ups_from_other_conversation']}",
                  f"  same conversation: {m['same_conversation']['hits']}/{m['same_conversation']['lookups']} hits",
                  (f"  asked in another conversation: {m['other_conversation']['hits']} hits in "
                   f"{m['other_conversation']['lookups']} lookups, {m['other_conversation']['wrong']} wrong"),
                  (f"  asked without context: {m['without_context']['hits']} hits in "
                   f"{m['without_context']['lookups']} lookups, {m['without_context']['wrong']} wrong")]
    return "\n".join(lines)


def intent_lines(r: dict) -> list[str]:
    def row(name: str, part: dict) -> str:
        return (f"  {name:<14}{part['lookups']:>8}{part['served']:>8}{part['hit_rate']:>10.4f}{part['wrong']:>7}"
                f"{part['false_hit_rate']:>16.4f}")
    coverage = f", {r['coverage']:.0%} of the intents" if r.get("coverage", 1.0) < 1.0 else ""
    head = f"intent mode ({r['intents']} intents{coverage}, {r['per_intent']} per intent warmed, {r['entries']} entries)"
    return [head,
            f"  {'lookups':<14}{'asked':>8}{'served':>8}{'hit_rate':>10}{'wrong':>7}{'false_hit_rate':>16}",
            row("all", r), row("in scope", r["in_scope"])] + \
        ([row("not cached", r["uncached"])] if "uncached" in r else []) + [row("out of scope", r["out_of_scope"])]

