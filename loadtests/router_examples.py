"""Labeled routing examples (simple / complex), generated from templates with a seed.

Built so that length alone misleads: short requests that need real reasoning ("Prove that √2 is
irrational.") and long ones that need none (a pasted page and "what is its title?").
Run: `python -m loadtests.router_examples --out router.jsonl [--n 800 --seed 0]`.
"""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

COUNTRIES = ["France", "Japan", "Kenya", "Peru", "Canada", "Norway", "India", "Egypt", "Chile", "Vietnam",
             "Poland", "Ghana", "Mexico", "Turkey", "Spain", "Brazil", "Italy", "Nepal", "Cuba", "Greece"]
LANGUAGES = ["Spanish", "French", "German", "Italian", "Portuguese", "Dutch", "Swedish", "Polish"]
PHRASES = ["good morning", "thank you very much", "where is the station", "see you tomorrow", "happy birthday",
           "I am hungry", "the bill, please", "how are you"]
WORDS = ["happy", "quick", "large", "smart", "angry", "bright", "calm", "brave", "cold", "rich"]
ACCOUNT = ["reset my password", "change my email address", "cancel my subscription", "update my card",
           "track my order", "download my invoice", "close my account", "change my delivery address"]
UNITS = [("centimeters", "meter"), ("grams", "kilogram"), ("minutes", "hour"), ("seconds", "minute"),
         ("millimeters", "centimeter"), ("days", "week"), ("months", "year"), ("ounces", "pound")]
TOPICS = ["climate change", "the printing press", "remote work", "urban gardening", "the Roman empire",
          "electric cars", "social media", "public libraries", "space exploration", "vaccination"]
SYSTEMS = ["URL shortener", "chat service", "payment ledger", "rate limiter", "search autocomplete",
           "photo sharing app", "job queue", "leaderboard", "notification service", "feature-flag store"]
PAIRS = [("PostgreSQL", "MongoDB"), ("REST", "gRPC"), ("Kafka", "RabbitMQ"), ("React", "Vue"),
         ("threads", "async IO"), ("TCP", "UDP"), ("Rust", "Go"), ("monoliths", "microservices")]
THEOREMS = ["the square root of 2 is irrational", "there are infinitely many primes",
            "the sum of the first n odd numbers is n squared", "every tree with n nodes has n-1 edges",
            "the angles of a triangle sum to 180 degrees", "log2(3) is irrational",
            "a graph is bipartite iff it has no odd cycle", "n^3 - n is divisible by 6"]
SKILLS = ["Python", "linear algebra", "Spanish", "piano", "statistics", "distributed systems", "drawing"]
FILLER = ("The committee met on Tuesday to review the quarterly figures. Attendance was good and the "
          "minutes were approved without changes. Several members raised questions about the schedule "
          "for the coming months, and the chair promised to circulate a revised plan. ")
CODE_HEADS = ["def parse_args(argv):", "import os\nimport sys\n", "class User:\n    def __init__(self,",
              "for i in range(len(items)):", "async def fetch(session, url):", "SELECT id, name FROM"]
OPENERS = ["", "", "Quick question: ", "Please, ", "Hey, ", "I need help. ", "Can you help? ", "Hi! "]
CLOSERS = ["", "", " Thanks!", " Keep it short.", " Be precise.", " I'm in a hurry.", " Please answer carefully."]
BUGGY = ["lock_a.acquire()\nlock_b.acquire()\n# thread 2 takes lock_b then lock_a",
         "total = 0\nfor x in data:\n    total =+ x", "while queue:\n    item = queue.pop(0)\n    queue.append(item)",
         "if user.age > 18 or user.age < 65 and user.active:"]


def simple(rng: random.Random) -> dict:
    kind = rng.choice(["fact", "faq", "translate", "synonym", "units", "greeting", "long_lookup", "completion"])
    if kind == "fact":
        text = rng.choice(["What is the capital of {c}?", "What currency does {c} use?",
                           "What language is spoken in {c}?", "Where is {c}?", "What is the population of {c}?",
                           "Which continent is {c} in?", "What's the time zone of {c}?",
                           "Name the largest city in {c}."]).format(c=rng.choice(COUNTRIES))
    elif kind == "faq":
        text = rng.choice(["How do I {a}?", "Can I {a} online?", "Where can I {a}?"]).format(a=rng.choice(ACCOUNT))
    elif kind == "translate":
        text = f"Translate '{rng.choice(PHRASES)}' to {rng.choice(LANGUAGES)}."
    elif kind == "synonym":
        text = f"Give me a synonym for {rng.choice(WORDS)}."
    elif kind == "units":
        small, big = rng.choice(UNITS)
        text = f"How many {small} are in a {big}?"
    elif kind == "greeting":
        text = rng.choice(["hi!", "thanks, that helped", "good morning", "ok great", "hello there"])
    elif kind == "long_lookup":
        page = FILLER * rng.randint(6, 14)
        question = rng.choice(["What day did the committee meet?", "Who promised to circulate a plan?",
                               "Were the minutes approved?", "What is this text about, in three words?",
                               "Fix any typos in the text above.", "How many paragraphs are there?",
                               f"Translate the first sentence to {rng.choice(LANGUAGES)}."])
        text = f"{page}\n\n{question}"
    else:
        return {"kind": "completions", "prompt": rng.choice(CODE_HEADS), "max_tokens": rng.choice([16, 32, 64]),
                "label": "simple"}
    return {"kind": "chat", "messages": [{"role": "user", "content": text}], "label": "simple"}


def complex_(rng: random.Random) -> dict:
    kind = rng.choice(["proof", "design", "compare", "essay", "debug", "plan", "derive"])
    if kind == "proof":
        text = rng.choice(["Prove that {t}.", "Show rigorously that {t}.", "Why is it true that {t}? Give a proof."])
        text = text.format(t=rng.choice(THEOREMS))
    elif kind == "design":
        text = (f"Design a {rng.choice(SYSTEMS)} for {rng.choice(['a million', 'ten million', '50k'])} users a day. "
                + rng.choice(["Cover the data model, the failure modes and the trade-offs.",
                              "How would you scale it and keep it consistent?", "What breaks first, and why?"]))
    elif kind == "compare":
        a, b = rng.choice(PAIRS)
        text = f"Compare {a} and {b} for a team building a {rng.choice(SYSTEMS)}, and recommend one with reasons."
    elif kind == "essay":
        text = rng.choice(["Write a detailed, well-argued essay on the impact of {t}.",
                           "What are the long-term economic and social consequences of {t}? Argue carefully.",
                           "Critically assess the main arguments for and against {t}."]).format(t=rng.choice(TOPICS))
    elif kind == "debug":
        text = f"This code misbehaves. Explain exactly why and fix it:\n{rng.choice(BUGGY)}"
    elif kind == "plan":
        text = rng.choice(["Plan a 12-week curriculum to learn {s}, with weekly goals and how to check progress.",
                           "I have six months to get good at {s}. Build me a study plan and justify its order.",
                           "Explain how {s} experts reason about hard problems, with worked examples."]
                          ).format(s=rng.choice(SKILLS))
    else:
        text = rng.choice(["Derive the quadratic formula.", "Derive the formula for compound interest.",
                           "Derive Bayes' rule from the definition of conditional probability.",
                           "Explain why the halting problem is undecidable."])
    return {"kind": "chat", "messages": [{"role": "user", "content": text}], "label": "complex"}


def generate(n: int = 800, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    return [dress((simple if i % 2 == 0 else complex_)(rng), rng) for i in range(n)]


def dress(row: dict, rng: random.Random) -> dict:
    """Vary the wording around a chat request, as real users do."""
    if row["kind"] == "chat":
        message = row["messages"][-1]
        message["content"] = rng.choice(OPENERS) + message["content"] + rng.choice(CLOSERS)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--n", type=int, default=800)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = generate(args.n, args.seed)
    Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"wrote {len(rows)} examples to {args.out}")


if __name__ == "__main__":
    main()
