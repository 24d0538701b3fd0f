"""The README's configuration block is the real schema with its real defaults, and names every key."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from cachegate.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"


def documented() -> dict:
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README must show the config file"
    return yaml.safe_load(blocks[0])


def key_paths(node, prefix=()) -> set[tuple[str, ...]]:
    if isinstance(node, list) and node and isinstance(node[0], dict):
        node = node[0]
    if not isinstance(node, dict) or not node:
        return {prefix}
    paths = set()
    for key, value in node.items():
        paths |= key_paths(value, prefix + (key,))
    return paths


def test_readme_config_block_equals_the_embedded_defaults():
    assert Settings.model_validate(documented()) == Settings()


def test_readme_config_block_names_every_key():
    missing = key_paths(Settings().model_dump()) - key_paths(documented())
    assert not missing, f"keys missing from the README's config block: {sorted(missing)}"
