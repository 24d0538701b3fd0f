"""The pieces of distillation that need no model: agreement measures, the routing share, the seeded
train / held-out split, and LoRA merging (a merged model computes what the adapted one did)."""
from __future__ import annotations

import math

import torch
from torch import nn

from cachegate.distill.agreement import exact_match, is_short, rouge_l
from cachegate.distill.data import split, unique
from cachegate.distill.entry import AnswerEntry
from cachegate.distill.lora import add_adapters, merge_adapters
from cachegate.distill.routing_share import router_score, share_at


def test_rouge_l_is_the_f1_of_the_longest_common_word_subsequence():
    assert rouge_l("You can cancel your order by clicking cancel", "You can cancel your order on the page") == 0.625
    assert rouge_l("same words here", "Same words, here!") == 1.0
    assert rouge_l("nothing alike", "completely different") == 0.0


def test_exact_match_ignores_case_punctuation_and_articles_and_applies_to_short_answers():
    assert exact_match("Yes, you can.", "yes you can")
    assert exact_match("The Stores page", "stores page")
    assert not exact_match("Yes.", "No.")
    assert is_short("Yes, you can.") and not is_short("You can cancel your order from the order page in the app.")


def test_share_takes_the_simplest_requests_while_agreement_holds():
    scores, agrees = [0.1, 0.2, 0.2, 0.3, 0.5], [True, True, False, True, False]
    at_07 = share_at(scores, agrees, 0.7)
    assert (at_07.share, at_07.threshold, at_07.agree_rate) == (0.8, 0.5, 0.75)
    assert share_at(scores, agrees, 0.9).share == 0.2          # a cut never splits the two 0.2s
    assert share_at(scores, [True] * 5, 0.9).threshold == math.inf
    assert share_at(scores, [False] * 5, 0.5).share == 0.0


def test_router_score_is_the_gateways_complexity_score():
    simple = AnswerEntry("t", "default", "m", "a", messages=[{"role": "user", "content": "Where is my parcel?"}])
    hard = AnswerEntry("t", "default", "m", "a", messages=[{"role": "user", "content":
                       "Prove step by step, in detail, that the integral of x^2 is x^3/3, and compare two proofs."}])
    assert router_score(simple) < 0.8 <= router_score(hard)


def entries(n: int) -> list[AnswerEntry]:
    return [AnswerEntry("t", "default", "m", f"answer {i}", messages=[{"role": "user", "content": f"q{i}"}])
            for i in range(n)]


def test_split_is_seeded_disjoint_and_independent_of_log_order():
    train, held = split(entries(400), 0.2, seed=3)
    assert not {e.request_key for e in train} & {e.request_key for e in held}
    assert 40 < len(held) < 120 and len(train) + len(held) == 400
    again = split(list(reversed(entries(400))), 0.2, seed=3)[1]
    assert {e.request_key for e in again} == {e.request_key for e in held}
    assert {e.request_key for e in split(entries(400), 0.2, seed=4)[1]} != {e.request_key for e in held}


def test_repeated_requests_count_once():
    twice = entries(3) + entries(3)
    assert len(unique(twice)) == 3


def test_merged_adapters_compute_what_the_adapted_model_did():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    adapters = add_adapters(model, rank=2, alpha=4, targets=("0", "2"))
    x = torch.randn(5, 8)
    assert torch.equal(model(x), nn.Sequential(*[getattr(a, "base", a) for a in model])(x))   # B = 0 at first
    for a in adapters.values():
        nn.init.normal_(a.lora_b)
    adapted = model(x).detach()
    merge_adapters(model, adapters)
    assert all(type(m) is not type(adapters["0"]) for m in model)
    assert torch.allclose(model(x), adapted, atol=1e-5)
