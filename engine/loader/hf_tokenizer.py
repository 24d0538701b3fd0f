"""Building our `Tokenizer` from an HF folder: tokenizer.json, tokenizer_config.json, chat template files.

The chat template may sit in tokenizer_config.json, chat_template.jinja or chat_template.json.
"""
from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer as Backend

from engine.errors import UnsupportedModelError
from engine.tokenizer import Tokenizer

SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "pad_token")


def token_text(value) -> str | None:
    """tokenizer_config stores a special token as a string or as an AddedToken dict."""
    return value.get("content") if isinstance(value, dict) else value


def pick_template(value) -> str | None:
    """A template string, or HF's list of named templates (we take "default")."""
    if isinstance(value, list):
        named = {t["name"]: t["template"] for t in value}
        return named.get("default") or next(iter(named.values()), None)
    return value


def chat_template(folder: Path, tokenizer_config: dict) -> str | None:
    if (folder / "chat_template.jinja").is_file():
        return (folder / "chat_template.jinja").read_text()
    if (folder / "chat_template.json").is_file():
        return pick_template(json.loads((folder / "chat_template.json").read_text()).get("chat_template"))
    return pick_template(tokenizer_config.get("chat_template"))


def build_hf_tokenizer(folder: Path) -> Tokenizer:
    if not (folder / "tokenizer.json").is_file():
        raise UnsupportedModelError(f"{folder} has no tokenizer.json (slow tokenizers are not supported)")
    backend = Backend.from_file(str(folder / "tokenizer.json"))
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text()) if config_path.is_file() else {}
    special = {k: t for k in SPECIAL_KEYS if (t := token_text(config.get(k))) is not None}
    return Tokenizer(backend, chat_template(folder, config), special)
