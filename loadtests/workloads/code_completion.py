"""The code-completion workload (`/v1/completions`): short prompts built from the patterns editors send
most (import blocks, boilerplate, common function heads), drawn with Zipf popularity, temperature 0,
under 200 completion tokens, each with a 200 ms budget. Every distinct prompt is its own intent."""
from __future__ import annotations

import random
from typing import ClassVar

from loadtests.workloads.base import Session, Turn
from loadtests.workloads.zipf import Zipf

PY_IMPORTS = (
    "import os\nimport sys\n", "import json\nfrom pathlib import Path\n",
    "import numpy as np\nimport pandas as pd\n", "from __future__ import annotations\n\nimport asyncio\n",
    "import torch\nimport torch.nn as nn\n", "from dataclasses import dataclass\nfrom typing import Any\n",
    "import argparse\nimport logging\n", "import re\nfrom collections import Counter\n",
)
PY_HEADS = (
    "def read_json(path):\n    ", "def write_json(path, data):\n    ", "def parse_args():\n    ",
    "def main():\n    ", 'if __name__ == "__main__":\n    ', "class Config:\n    def __init__(self, ",
    "def fibonacci(n):\n    ", "def is_prime(n):\n    ", "def flatten(items):\n    ",
    "def chunked(items, size):\n    ", "async def fetch(session, url):\n    ", "def setup_logging(level):\n    ",
    "class Model(nn.Module):\n    def __init__(self, dim):\n        ", "def word_count(text):\n    ",
    "def load_csv(path):\n    ", "def retry(fn, attempts=3):\n    ", "@dataclass\nclass User:\n    ",
    "def test_add():\n    ", "def normalize(v):\n    ", "def timer(func):\n    ",
    "def merge_dicts(a, b):\n    ", "def slugify(text):\n    ", "def read_lines(path):\n    ",
    "def train_step(model, batch, optimizer):\n    ",
)
JS_IMPORTS = (
    "import React from 'react';\n", "const express = require('express');\n",
    "import { useState, useEffect } from 'react';\n", "import fs from 'fs';\nimport path from 'path';\n",
)
JS_HEADS = (
    "function debounce(fn, wait) {\n  ", "export default function App() {\n  ", "const app = express();\n",
    "async function fetchJson(url) {\n  ", "function sum(arr) {\n  ", "export function formatDate(date) {\n  ",
    "app.get('/', (req, res) => {\n  ", "function capitalize(str) {\n  ",
)
GO_IMPORTS = ('package main\n\nimport (\n\t"fmt"\n\t"net/http"\n)\n', 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n')
GO_HEADS = ("func main() {\n\t", "func handler(w http.ResponseWriter, r *http.Request) {\n\t",
            "func add(a, b int) int {\n\t", "type Server struct {\n\t", "func check(err error) {\n\t")
IMPORT_STARTS = ("import os\nimport ", "from typing import ", "import numpy as np\nimport ",
                 "import React, { ", "const fs = require(", "from django.db import ")
MAX_TOKENS = (32, 48, 64, 96, 128)


def prompts() -> list[tuple[str, str]]:
    """(label, prompt) for every prompt of the pool, in a fixed order."""
    out = [(f"code.start.{i}", p) for i, p in enumerate(IMPORT_STARTS)]
    for lang, imports, heads in (("py", PY_IMPORTS, PY_HEADS), ("js", JS_IMPORTS, JS_HEADS),
                                 ("go", GO_IMPORTS, GO_HEADS)):
        out += [(f"code.{lang}.{i}.{j}", f"{imp}\n\n{head}") for i, imp in enumerate(imports)
                for j, head in enumerate(heads)]
    return out


class CodeCompletion:
    name = "code-completion"
    budget_ms = 200.0
    reference: ClassVar[dict] = {"budget_ms": 200.0, "note": "completions under 200 tokens, 200 ms budget per completion"}

    def __init__(self, seed: int = 0, s: float = 1.1) -> None:
        rng = random.Random(seed)
        pool = prompts()
        rng.shuffle(pool)                         # popularity rank independent of language
        self.pool = [(label, text, rng.choice(MAX_TOKENS)) for label, text in pool]
        self.zipf = Zipf(len(self.pool), s)

    def session(self, rng: random.Random) -> Session:
        label, text, max_tokens = self.pool[self.zipf.draw(rng)]
        return Session((Turn(text, label),), "completions", None, {"max_tokens": max_tokens, "temperature": 0})
