"""A curated answer as operators write it, and the files they keep them in: JSON lines
`{"id", "questions": [...], "answer", "namespace"?, "tenant"?, "model"?, "ttl_s"?}`, or CSV with columns
`id,question,answer[,namespace,tenant,model,ttl_s]`, one row per example question (rows sharing an id make
one answer). No tenant: every tenant; no model: every model and tier; no TTL: no expiry."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

ANY = "*"


class CuratedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")
    questions: list[str] = Field(min_length=1, max_length=200)
    answer: str = Field(min_length=1, max_length=100_000)
    namespace: str = Field("default", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._-]+$")
    tenant: str | None = Field(None, min_length=1, max_length=128)
    model: str | None = Field(None, min_length=1, max_length=128)     # a model or a tier name
    ttl_s: float | None = Field(None, gt=0)
    updated: float = 0.0

    @field_validator("questions")
    @classmethod
    def real_questions(cls, questions: list[str]) -> list[str]:
        kept = list(dict.fromkeys(q.strip() for q in questions if q.strip()))
        if not kept:
            raise ValueError("a curated answer needs at least one example question")
        return kept

    def same_content(self, other: CuratedAnswer) -> bool:
        """Equal but for when it was written: re-importing it changes nothing."""
        return self.model_dump(exclude={"updated"}) == other.model_dump(exclude={"updated"})

    def view(self, hits: int = 0) -> dict[str, Any]:
        return self.model_dump() | {"hits": hits}


def read_file(path: str | Path) -> list[CuratedAnswer]:
    """The answers a JSONL (`.jsonl`, `.json`) or CSV (`.csv`) file holds; raises ValueError naming the line."""
    text = Path(path).read_text(encoding="utf-8")
    return read_csv(text) if str(path).endswith(".csv") else read_jsonl(text)


def read_jsonl(text: str) -> list[CuratedAnswer]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append(CuratedAnswer.model_validate(json.loads(line)))
            except ValueError as exc:
                raise ValueError(f"line {n}: {exc}") from None
    return out


def read_csv(text: str) -> list[CuratedAnswer]:
    rows: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(csv.DictReader(io.StringIO(text)), 2):
        if not row.get("id") or not row.get("question") or not row.get("answer"):
            raise ValueError(f"row {n}: id, question and answer are required")
        record = rows.setdefault(row["id"], {"id": row["id"], "questions": [], "answer": row["answer"]})
        record["questions"].append(row["question"])
        for key in ("namespace", "tenant", "model", "ttl_s"):
            if row.get(key):
                record[key] = row[key]
    try:
        return [CuratedAnswer.model_validate(r) for r in rows.values()]
    except ValueError as exc:
        raise ValueError(str(exc)) from None


def write_jsonl(answers: list[CuratedAnswer]) -> str:
    return "".join(json.dumps(a.model_dump(exclude={"updated"}, exclude_none=True), ensure_ascii=False) + "\n"
                   for a in answers)
