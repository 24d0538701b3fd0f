"""`cachegate eval semantic`: how often the semantic tier serves the right answer, and how often a wrong one.

Pair mode asks the policy about each labeled row; cache mode stores every question1 and looks every
question2 up through the real tier; intent mode (`cachegate.commands.evaluate_intents`) warms K questions per intent
and looks the rest up; multi-turn mode checks follow-ups never cross conversations.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
from dataclasses import dataclass

import numpy as np

from cachegate.backends.base import BackendRequest, Usage
from cachegate.cache.answer import CachedAnswer
from cachegate.cache.semantic import datasets
from cachegate.cache.semantic.embedder import PACKAGED, Embedder
from cachegate.cache.semantic.tier import SemanticTier
from engine.sampling_params import SamplingParams
from policies import calibration
from policies.thresholds import Candidate

COSINE_THRESHOLDS = (0.80, 0.85, 0.90, 0.95)
CROSS_ALL_UP_TO = 200       # conversations; past this, each follow-up is tried in its nearest + random others
CROSS_NEAREST, CROSS_RANDOM = 20, 10


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
    p.add_argument("--seed", type=int, default=0, help="intent mode: which questions warm the cache")
    p.add_argument("--policy", default="packaged", help="'packaged', 'cosine' or a policy file")
    p.add_argument("--threshold", type=float, default=0.9, help="threshold when --policy cosine")
    p.add_argument("--no-cache-mode", action="store_true", help="pair mode only (faster)")
    p.add_argument("--embedding-cache", help="folder to memoise embeddings in")
    p.add_argument("--json", action="store_true", help="print one JSON line")


def run(args: argparse.Namespace) -> int:
    if not args.pairs and not args.multiturn and not args.paraphrases and not args.intents:
        raise SystemExit("give --pairs FILE.csv, --paraphrases FILE.json, --intents FILE.json and/or --multiturn FILE.json")
    report: dict = {"policy": args.policy}
    embedder = Embedder(PACKAGED, cache_size=10 ** 7)
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
        from cachegate.commands.calibrate import conversation_contexts
        conversations = datasets.read_conversations(args.multiturn)
        texts = [t for c in conversations for t in (c.question, c.follow_up)] + conversation_contexts(conversations)
        embedder.cache.update(datasets.embed_all(embedder, texts, args.embedding_cache))
        report["multiturn"] = asyncio.run(multiturn_mode(make_tier(args, embedder), conversations))
    print(json.dumps(report) if args.json else table(report))
    return 0


def make_tier(args: argparse.Namespace, embedder: Embedder) -> SemanticTier:
    from cachegate.cache.semantic.assemble import build_semantic_store, build_semantic_tier
    from cachegate.settings import load_settings
    settings = load_settings(env={}, overrides={"cache": {"semantic": {
        "policy": args.policy, "threshold": args.threshold, "max_entries": 10 ** 7, "max_bytes": 1 << 40}}})
    return build_semantic_tier(settings, build_semantic_store(settings), embedder)


# -- pair mode ------------------------------------------------------------------------------------
def decisions(policy, pairs: list[datasets.Pair], vectors: dict[str, np.ndarray], verifier=None) -> np.ndarray:
    """The policy's verdict on each pair on its own (question2 asked, question1 cached), verified when the policy
    is the matcher."""
    logits = verifier.logits([(p.b, p.a) for p in pairs]) if verifier is not None and pairs else [None] * len(pairs)
    return np.array([policy.decide(Candidate(p.b, p.a, float(np.dot(vectors[p.a], vectors[p.b])),
                                             query_vector=vectors[p.b], entry_vector=vectors[p.a],
                                             verified=None if z is None else float(z))).hit
                     for p, z in zip(pairs, logits)], dtype=bool)


def pair_mode(policy, pairs: list[datasets.Pair], vectors: dict[str, np.ndarray], verifier=None) -> dict:
    labels = np.array([p.duplicate for p in pairs])
    cosines = np.array([float(np.dot(vectors[p.a], vectors[p.b])) for p in pairs])
    hits = decisions(policy, pairs, vectors, verifier)
    mine = calibration.rates(hits, labels)
    at_same, threshold = calibration.hit_rate_at(cosines, labels, mine.false_hit_rate)
    return {"rows": len(pairs), "duplicates": int(labels.sum()), **mine.as_dict(),
            "cosine_hit_rate_at_same_false_hit_rate": round(at_same, 4),
            "cosine_threshold_at_same_false_hit_rate": round(threshold, 4),
            "cosine": {f"{t:.2f}": calibration.rates(cosines >= t, labels).as_dict() for t in COSINE_THRESHOLDS}}


# -- paraphrase mode ------------------------------------------------------------------------------
def run_paraphrases(args: argparse.Namespace, embedder: Embedder) -> dict:
    from cachegate.commands.calibrate import with_negatives
    pairs = with_negatives(datasets.read_paraphrases(args.paraphrases), seed=0)
    hard = [p for p in datasets.read_pairs_csv(args.pairs) if not p.duplicate] if args.pairs else []
    vectors = datasets.embed_all(embedder, [t for p in pairs + hard for t in (p.a, p.b)], args.embedding_cache)
    tier = make_tier(args, embedder)
    return paraphrase_mode(tier.policy, pairs, hard, vectors, tier.verifier)


def paraphrase_mode(policy, pairs: list[datasets.Pair], hard: list[datasets.Pair],
                    vectors: dict[str, np.ndarray], verifier=None) -> dict:
    """Hit rate on the paraphrases; false hits on unrelated pairs and on hard (labeled) non-duplicates."""
    def hits(rows: list[datasets.Pair]) -> np.ndarray:
        return decisions(policy, rows, vectors, verifier)
    positives = [p for p in pairs if p.duplicate]
    found, unrelated, wrong = hits(positives), hits([p for p in pairs if not p.duplicate]), hits(hard)
    false = int(unrelated.sum() + wrong.sum())
    return {"paraphrases": len(positives), "hit_rate": round(float(found.mean()), 4),
            "unrelated_pairs": len(unrelated), "unrelated_false_hits": int(unrelated.sum()),
            "hard_negatives": len(hard), "hard_false_hits": int(wrong.sum()),
            "false_hit_rate": round(false / max(1, false + int(found.sum())), 4)}


# -- intent mode -----------------------------------------------------------------------------------
def run_intents(args: argparse.Namespace, embedder: Embedder) -> dict:
    from cachegate.commands import evaluate_intents as intents
    domains = [d.strip() for d in args.domains.split(",")] if args.domains else None
    data = intents.read_intents(args.intents, domains, args.domain_file)
    texts = [t for t, _ in data.train + data.test] + data.oos_test
    embedder.cache.update(datasets.embed_all(embedder, texts, args.embedding_cache))
    report = asyncio.run(intents.intent_mode(make_tier(args, embedder), data, args.per_intent, args.seed,
                                             not args.no_oos))
    return report | ({"domains": domains} if domains else {})


# -- cache mode -----------------------------------------------------------------------------------
def request_for(question: str, context: tuple[str, str] | None = None) -> BackendRequest:
    earlier = [{"role": "user", "content": context[0]}, {"role": "assistant", "content": context[1]}] if context \
        else []
    return BackendRequest(model="eval", params=SamplingParams(), messages=earlier + [
        {"role": "user", "content": question}])


async def store(tier: SemanticTier, question: str, answer: str, context: tuple[str, str] | None = None) -> None:
    lookup = await tier.prepare("chat", request_for(question, context), "default")
    await tier.put(lookup, CachedAnswer(answer, "stop", "eval", Usage()))


async def served(tier: SemanticTier, question: str, context: tuple[str, str] | None = None) -> str | None:
    """The answer text the tier serves for the question, or None on a miss."""
    found = await tier.lookup("chat", request_for(question, context))
    return found.hit.entry.answer.text if found and found.hit else None


async def cache_mode(tier: SemanticTier, pairs: list[datasets.Pair]) -> dict:
    for q in dict.fromkeys(p.a for p in pairs):
        await store(tier, q, q)                      # the answer names its question
    partner = nondup = other = 0
    for p in pairs:
        got = await served(tier, p.b)
        if got is None:
            continue
        if got == p.a:
            partner += p.duplicate
            nondup += not p.duplicate
        else:
            other += 1
    duplicates = sum(p.duplicate for p in pairs)
    hits = partner + nondup + other
    return {"entries": len(tier.catalog), "lookups": len(pairs), "hits": hits,
            "hit_rate": round(partner / max(1, duplicates), 4), "partner_hits": partner,
            "labeled_non_duplicate_hits": nondup, "other_entry_hits": other,
            "false_hit_rate_labeled": round(nondup / max(1, partner + nondup), 4)}


# -- multi-turn mode ------------------------------------------------------------------------------
@dataclass
class Tally:
    lookups: int = 0
    hits: int = 0
    wrong: int = 0


async def multiturn_mode(tier: SemanticTier, conversations: list[datasets.Conversation]) -> dict:
    for i, c in enumerate(conversations):
        await store(tier, c.question, f"opening {i}")
        await store(tier, c.follow_up, f"follow-up {i}", (c.question, c.answer))
    opening = [c.question.lower() for c in conversations]
    same, cross, bare = Tally(), Tally(), Tally()
    for i, c in enumerate(conversations):
        _count(same, await served(tier, c.follow_up, (c.question, c.answer)), opening, opening[i])
        _count(bare, await served(tier, c.follow_up), opening, None)
        for j in others(tier, conversations, i):
            cj = conversations[j]
            _count(cross, await served(tier, c.follow_up, (cj.question, cj.answer)), opening, opening[j])
    return {"conversations": len(conversations),
            "follow_ups_from_other_conversation": cross.wrong + bare.wrong,
            "same_conversation": {"lookups": same.lookups, "hits": same.hits,
                                  "hit_rate": round(same.hits / max(1, same.lookups), 4), "wrong": same.wrong},
            "other_conversation": {"lookups": cross.lookups, "hits": cross.hits, "wrong": cross.wrong},
            "without_context": {"lookups": bare.lookups, "hits": bare.hits, "wrong": bare.wrong}}


def _count(tally: Tally, answer: str | None, opening: list[str], asked_in: str | None) -> None:
    """A follow-up answer served from a conversation other than the one it was asked in is wrong."""
    tally.lookups += 1
    if answer is None:
        return
    tally.hits += 1
    kind, index = answer.split(" ")
    if kind == "follow-up" and opening[int(index)] != asked_in:
        tally.wrong += 1


def others(tier: SemanticTier, conversations: list[datasets.Conversation], i: int) -> list[int]:
    """Every other conversation (with a different opening), or past a size the closest and some random."""
    n = len(conversations)
    different = [j for j in range(n) if conversations[j].question.lower() != conversations[i].question.lower()]
    if n <= CROSS_ALL_UP_TO:
        return different
    from cachegate.commands.calibrate import context_of
    ctx = tier.embedder.cache
    mine = ctx[context_of(conversations[i])]
    near = sorted(different, key=lambda j: -float(np.dot(mine, ctx[context_of(conversations[j])])))
    rest = near[CROSS_NEAREST:]
    return near[:CROSS_NEAREST] + random.Random(i).sample(rest, min(CROSS_RANDOM, len(rest)))


# -- printing -------------------------------------------------------------------------------------
def table(report: dict) -> str:
    lines = [f"policy: {report['policy']}"]
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
    return [f"intent mode ({r['intents']} intents, {r['per_intent']} per intent warmed, {r['entries']} entries)",
            f"  {'lookups':<14}{'asked':>8}{'served':>8}{'hit_rate':>10}{'wrong':>7}{'false_hit_rate':>16}",
            row("all", r), row("in scope", r["in_scope"]), row("out of scope", r["out_of_scope"])]

