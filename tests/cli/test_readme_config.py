"""The README's configuration block is the real schema with its real defaults."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from cachegate.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_config_block_equals_the_embedded_defaults():
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README must show the config file"
    documented = Settings.model_validate(yaml.safe_load(blocks[0]))
    assert documented == Settings()
