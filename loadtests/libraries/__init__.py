"""Example curated libraries for the load-test workloads (`cachegate answers import`): the customer-service
bot's most asked intents with a few of their phrasings and the approved answer, and the code-completion
service's most requested prompts with a snippet. Ids are the workloads' labels, so the load test can tell
a right curated hit from a wrong one. `python -m loadtests.libraries` rewrites the two files here."""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
SNIPPETS = {   # the completion a code platform approves for a function head, whatever imports precede it
    "def read_json(path):\n    ": "with open(path, encoding=\"utf-8\") as f:\n        return json.load(f)\n",
    "def write_json(path, data):\n    ": "with open(path, \"w\", encoding=\"utf-8\") as f:\n        json.dump(data, f, indent=2)\n",
    "def fibonacci(n):\n    ": "if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    "def is_prime(n):\n    ": ("if n < 2:\n        return False\n    return all(n % d for d in range(2, int(n ** 0.5) + 1))\n"),
    "def flatten(items):\n    ": "return [x for sub in items for x in sub]\n",
    "def chunked(items, size):\n    ": "return [items[i:i + size] for i in range(0, len(items), size)]\n",
    "def word_count(text):\n    ": "return Counter(text.split())\n",
    "def merge_dicts(a, b):\n    ": "return {**a, **b}\n",
    "def read_lines(path):\n    ": "with open(path, encoding=\"utf-8\") as f:\n        return [line.rstrip(\"\\n\") for line in f]\n",
    "def normalize(v):\n    ": "norm = sum(x * x for x in v) ** 0.5\n    return [x / norm for x in v] if norm else v\n",
    "function sum(arr) {\n  ": "return arr.reduce((a, b) => a + b, 0);\n}\n",
    "function capitalize(str) {\n  ": "return str.charAt(0).toUpperCase() + str.slice(1);\n}\n",
}


def customer_service(top: int = 40, examples: int = 4) -> list[dict]:
    from loadtests.workloads.customer_service import CustomerService
    workload = CustomerService(seed=0)
    return [{"id": intent.id, "questions": list(intent.paraphrases[:examples]), "answer": intent.answer}
            for intent in workload.intents[:top]]


def code_completion(top: int = 60) -> list[dict]:
    from loadtests.workloads.code_completion import CodeCompletion
    out = []
    for label, text, _ in CodeCompletion(seed=0).pool[:top]:
        head = next((h for h in SNIPPETS if text.endswith(h)), None)
        if head is not None:
            out.append({"id": label, "questions": [text], "answer": SNIPPETS[head]})
    return out


def write() -> None:
    for name, records in (("customer-service", customer_service()), ("code-completion", code_completion())):
        (HERE / f"{name}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        print(f"{name}: {len(records)} curated answers")
