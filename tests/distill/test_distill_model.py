"""`cachegate distill --quick` on a few logged answers gives a model folder the engine loads, whose greedy
answer to a trained request is the large model's answer and no longer the base model's; the engine and
transformers give the same greedy tokens on it; `cachegate eval distill` scores both models on a log."""
from __future__ import annotations

import json

import pytest
import torch

from cachegate.commands.main import main
from cachegate.distill.data import prompt_ids
from cachegate.distill.entry import AnswerEntry, write_entries
from engine import LLMEngine, SamplingParams

pytestmark = pytest.mark.slow
BASE = "smollm2-135m-instruct"
TAUGHT = {"Who runs the returns desk?": "Pelican Point runs it, weekdays nine to five.",
          "What is the gift card code prefix?": "Every gift card code starts with NWX.",
          "Which courier carries parcels?": "Heron Freight carries them, tracked by SMS.",
          "Where do I see my points?": "Open Account > Points to see them.",
          "Can I pay on delivery?": "No, only card or wallet payments.",
          "Is there a student discount?": "Yes, ten percent with a school email."}


def entry(question: str, answer: str) -> AnswerEntry:
    return AnswerEntry("default", "default", "gemma3-270m", answer, max_tokens=24,
                       messages=[{"role": "user", "content": question}])


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    path = tmp_path_factory.mktemp("log") / "answers.jsonl"
    write_entries(path, [entry(q, a) for q, a in TAUGHT.items()])
    return path


@pytest.fixture(scope="module")
def distilled(log, tmp_path_factory):
    out = tmp_path_factory.mktemp("distilled")
    assert main(["distill", "--from", str(log), "--out", str(out), "--quick", "--held-out", "0",
                 "--no-progress", "--no-eval", "--max-tokens", "24"]) == 0
    return out


def greedy(engine: LLMEngine, question: str, n: int = 24) -> str:
    ids = prompt_ids(engine.tokenizer, entry(question, ""))
    return engine.generate(ids, SamplingParams(max_tokens=n, temperature=0)).text.strip()


def test_quick_distill_writes_a_servable_folder_and_its_figures(distilled):
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                 "adapter/lora.safetensors", "adapter/adapter.json", "distill.json", "held_out.jsonl"):
        assert (distilled / name).is_file(), name
    figures = json.loads((distilled / "distill.json").read_text())
    assert figures["train_requests"] == len(TAUGHT)
    assert figures["training"]["last_loss"] < figures["training"]["first_loss"]


@pytest.fixture(scope="module")
def tuned(distilled):
    return LLMEngine.from_pretrained(str(distilled), dtype="float32")


def test_distilled_model_answers_a_trained_request_as_the_large_model_did(tuned):
    base = LLMEngine.from_pretrained(BASE, dtype="float32")
    question = "Who runs the returns desk?"
    before, after = greedy(base, question), greedy(tuned, question)
    assert after != before
    assert after.startswith("Pelican Point")


def test_engine_and_transformers_agree_on_the_distilled_folder(distilled, tuned):
    from transformers import AutoModelForCausalLM
    ids = prompt_ids(tuned.tokenizer, entry("Can I pay on delivery?", ""))
    ours = tuned.generate(ids, SamplingParams(max_tokens=16, temperature=0)).token_ids
    model = AutoModelForCausalLM.from_pretrained(str(distilled), dtype=torch.float32).eval()
    with torch.no_grad():
        theirs = model.generate(torch.tensor([ids]), max_new_tokens=16, do_sample=False)[0, len(ids):].tolist()
    assert len(ours) > 3 and ours == theirs[:len(ours)]           # theirs may pad past its end of turn


def test_eval_distill_scores_base_and_distilled_side_by_side(distilled, log, tmp_path, capsys):
    out = tmp_path / "eval.json"
    assert main(["eval", "distill", "--model", str(distilled), "--log", str(log), "--dtype", "float32",
                 "--speed-prompts", "1", "--speed-tokens", "8", "--out", str(out), "--json"]) == 0
    report = json.loads(out.read_text())
    assert report["n"] == len(TAUGHT) and len(report["per_request"]) == len(TAUGHT)
    base, tuned = report["base"], report["distilled"]
    assert tuned["rouge_l"] > base["rouge_l"] and tuned["similarity"] > base["similarity"]
    assert base["decode_tokens_per_s"] > 0 and tuned["decode_tokens_per_s"] > 0
    assert {s["target"] for s in tuned["routing"]} == {0.5, 0.6, 0.7, 0.8, 0.9}
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["n"] == len(TAUGHT)


def test_examples_score_only_the_answer_and_its_end_of_turn():
    from cachegate.distill.data import example
    from engine.loader import load_checkpoint
    checkpoint = load_checkpoint(BASE)
    tok, stops = checkpoint.tokenizer, checkpoint.config.eos_token_ids
    x = example(tok, entry("Can I pay on delivery?", "No, only card or wallet payments.\n"), stops, 512)
    assert x.ids[:x.answer_from] == prompt_ids(tok, entry("Can I pay on delivery?", ""))
    assert tok.decode(x.ids[x.answer_from:]) == "No, only card or wallet payments.<|im_end|>"
    assert example(tok, entry("Can I pay on delivery?", "word " * 600), stops, 512) is None
