"""Where the engine keeps files it derives once and reuses: assembled packaged models and tokenizers
rebuilt from GGUF vocabularies. `CACHEGATE_CACHE_DIR` wins; else the virtual environment's
share/cachegate when writable; else ~/.cache/cachegate.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

ENV = "CACHEGATE_CACHE_DIR"


def writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK)


def cache_dir(*parts: str) -> Path:
    for base in (os.environ.get(ENV), Path(sys.prefix) / "share" / "cachegate", Path.home() / ".cache" / "cachegate"):
        if base and writable(folder := Path(base).joinpath(*parts)):
            return folder
    raise OSError(f"no writable cache folder; set {ENV}")


def file_key(path: Path) -> str:
    """Changes when the file does (path, size, modification time)."""
    stat = Path(path).stat()
    return hashlib.sha1(f"{Path(path).resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
