"""The CPU decode-attention kernel (`cpu_decode.c`): compiled once per machine and source with the
system C compiler into the engine's cache folder, loaded with ctypes, and run on torch tensors by
`paged_decode`. Without a compiler (or when the build fails) `available()` is False and callers keep
the torch path.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

import torch

from engine.loader.cache_dir import cache_dir

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("cpu_decode.c")
# -ffast-math lets the compiler vectorize the reductions and expf; the link step goes without it, so the
# library does not set flush-to-zero for the whole process on load (gcc's crtfastmath.o)
COMPILE = ["-O3", "-march=native", "-ffast-math", "-fPIC", "-c"]
if platform.machine() in ("x86_64", "AMD64"):
    COMPILE.append("-mprefer-vector-width=512")   # gcc 12 keeps to 256-bit vectors on AVX-512 CPUs otherwise
LINK = ["-shared", "-lm"]
SUFFIX = {torch.float32: "f32", torch.bfloat16: "bf16"}
P, I = ctypes.c_void_p, ctypes.c_int
ARGTYPES = [P, P, P, P, P, P, I, I, I, I, I, I, I, ctypes.c_float, P]


def compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")


def machine_key(cc: str) -> str:
    """Source, flags, compiler and CPU features (-march=native builds for this CPU only)."""
    flags = ""
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    except OSError:
        pass
    text = "|".join([SOURCE.read_text(), " ".join(COMPILE + LINK), cc, platform.machine(), flags])
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def build(cc: str, target: Path) -> None:
    """Compile into a temporary folder, then move into place (concurrent builders do not collide)."""
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        obj, lib = Path(tmp) / "k.o", Path(tmp) / "k.so"
        subprocess.run([cc, *COMPILE, str(SOURCE), "-o", str(obj)], check=True, capture_output=True, timeout=120)
        subprocess.run([cc, str(obj), "-o", str(lib), *LINK], check=True, capture_output=True, timeout=120)
        os.replace(lib, target)


@functools.cache
def library() -> ctypes.CDLL | None:
    cc = compiler()
    if cc is None:
        log.info("no C compiler: CPU decode attention stays on the torch path")
        return None
    try:
        path = cache_dir("kernels") / f"cpu_decode-{machine_key(cc)}.so"
        if not path.exists():
            build(cc, path)
        lib = ctypes.CDLL(str(path))
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        log.warning("CPU attention kernel unavailable (%s %s); using the torch path", exc, detail.decode()[-500:])
        return None
    for suffix in SUFFIX.values():
        fn = getattr(lib, f"paged_decode_{suffix}")
        fn.argtypes, fn.restype = ARGTYPES, ctypes.c_int
    return lib


def available() -> bool:
    return library() is not None


def supports(q: torch.Tensor, k_cache: torch.Tensor) -> bool:
    return (q.device.type == "cpu" and q.dtype in SUFFIX and k_cache.dtype == q.dtype
            and k_cache.is_contiguous() and available())


def paged_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
                 seq_lens: torch.Tensor, max_seq_len: int, window: int, scale: float) -> torch.Tensor | None:
    """q [B, Hq, D]; caches [blocks, bs, Hkv, D]; block_table int32 [B, W]; seq_lens int32 [B] ->
    [B, Hq, D], or None when the kernel does not handle these tensors (the caller falls back)."""
    if not (supports(q, k_cache) and v_cache.is_contiguous()):
        return None
    batch, hq, d = q.shape
    q, out = q.contiguous(), torch.empty_like(q, memory_format=torch.contiguous_format)
    table, lens = block_table.to(torch.int32).contiguous(), seq_lens.to(torch.int32).contiguous()
    assert table.shape[0] == lens.shape[0] == batch
    scratch = torch.empty(hq * (2 * d + max(1, max_seq_len)), dtype=torch.float32)
    fn = getattr(library(), f"paged_decode_{SUFFIX[q.dtype]}")
    status = fn(q.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(), table.data_ptr(), lens.data_ptr(),
                out.data_ptr(), batch, hq, k_cache.shape[2], d, k_cache.shape[1], table.shape[1], window,
                scale, scratch.data_ptr())
    return out if status == 0 else None
