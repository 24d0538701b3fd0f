"""Compiles the kernels ahead of time for NVIDIA GPUs (sm_90 Hopper, sm_80 Ampere) on a machine
without one, with the tile sizes the launchers pick: the checks the CPU interpreter skips (types,
tl.dot shapes, loop-carried values, shared memory). Run without TRITON_INTERPRET:
`python -m tests.kernels.compile_for_gpu`; one line per kernel, non-zero exit on a failure.
"""
from __future__ import annotations

import os
import sys
import time

assert os.environ.get("TRITON_INTERPRET", "0") in ("", "0"), "compiling needs TRITON_INTERPRET unset"

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from engine.kernels import decode_attention as dec
from engine.kernels import extend_attention as ext
from engine.kernels import store_kv as sto
from engine.kernels.common import dot_options

SHARED_LIMIT = {80: 163 * 1024, 90: 227 * 1024}   # bytes per block (A100, H100/H200)
TYPES = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}


def compile_for(fn, pointers: dict[str, str], constexprs: dict, arch: int, **options) -> int:
    """Compile `fn` for sm_<arch>; scalar args are i32 but for `scale_log2` (fp32). Returns shared bytes."""
    signature = {name: "constexpr" if name in constexprs else pointers.get(name, "i32")
                 for name in fn.arg_names}
    signature["scale_log2"] = "fp32" if "scale_log2" in signature else None
    signature = {k: v for k, v in signature.items() if v is not None}
    kernel = triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", arch, 32),
                            options=options)
    return kernel.metadata.shared


def extend_case(dtype: torch.dtype, dim: int, group: int) -> tuple:
    cfg = ext.extend_config(dim, dtype)
    launch = {k: cfg.pop(k) for k in ("num_warps", "num_stages")}
    t = "*" + TYPES[dtype]
    pointers = {"Q": t, "K": t, "V": t, "O": t, "BlockTable": "*i32", "CuQLens": "*i32",
                "PrefixLens": "*i32", "SeqLens": "*i32"}
    consts = dict(GROUP=group, PAGE=16, HEAD_DIM=dim, BLOCK_D=dim, **dot_options(dtype), **cfg)
    return ext._extend_kernel, pointers, consts, launch


def decode_case(dtype: torch.dtype, dim: int, group: int) -> tuple:
    cfg = dec.decode_config(dim, dtype)
    launch = {k: cfg.pop(k) for k in ("num_warps", "num_stages")}
    t = "*" + TYPES[dtype]
    pointers = {"Q": t, "K": t, "V": t, "MidO": "*fp32", "MidLse": "*fp32", "BlockTable": "*i32",
                "SeqLens": "*i32"}
    consts = dict(GROUP=group, BLOCK_H=max(16, triton.next_power_of_2(group)), PAGE=16, HEAD_DIM=dim,
                  BLOCK_D=dim, WRITE_LSE=True, **dot_options(dtype), **cfg)
    return dec._decode_split_kernel, pointers, consts, launch


def small_cases(dtype: torch.dtype) -> list[tuple]:
    t = "*" + TYPES[dtype]
    merge = (dec._decode_merge_kernel, {"MidO": "*fp32", "MidLse": "*fp32", "O": t},
             {"HEAD_DIM": 128, "BLOCK_D": 128, "BLOCK_S": 8}, {"num_warps": 4})
    store = (sto._store_kv_kernel, {"K": t, "V": t, "KCache": t, "VCache": t, "Slots": "*i64"},
             {"PAGE": 16, "HEADS": 1, "HEAD_DIM": 64, "BLOCK_H": 1, "BLOCK_D": 64}, {"num_warps": 4})
    return [merge, store]


def cases() -> list[tuple[int, tuple]]:
    """(arch, case): bf16 at every head dim on Hopper; fp16 and fp32 at 128 and 256 on Ampere."""
    out = [(90, make(torch.bfloat16, dim, 4)) for dim in (64, 128, 256) for make in (extend_case, decode_case)]
    out += [(80, make(dtype, dim, 3)) for dtype in (torch.float16, torch.float32) for dim in (128, 256)
            for make in (extend_case, decode_case)]
    return out + [(90, case) for case in small_cases(torch.bfloat16)]


def main() -> int:
    for arch, (fn, pointers, consts, launch) in cases():
        start = time.perf_counter()
        shared = compile_for(fn, pointers, consts, arch, **launch)
        print(f"sm_{arch} {fn.__name__:22} {pointers.get('Q', pointers.get('K', pointers.get('O'))):6} "
              f"dim {consts['HEAD_DIM']:3}  shared {shared / 1024:6.1f} KiB  {time.perf_counter() - start:.1f}s")
        if shared > SHARED_LIMIT[arch]:
            print(f"shared memory over the sm_{arch} limit", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
