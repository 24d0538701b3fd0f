"""`kernel_bench`: the Triton attention kernels against `scaled_dot_product_attention` (flash) on the
dense equivalent of the same work, for SmolLM2-like and 7B-like head layouts.

Each case builds dense K/V, scatters them into a paged pool through a shuffled block table, runs both
sides, checks they agree, and reports milliseconds, the speed ratio and TFLOP/s (extend) or GB/s
(decode). `gpu_check` drives it; on CPU (`tiny=True`) it only exercises the plumbing.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

LAYOUTS = {"smollm2-like": (9, 3, 64), "7b-like": (32, 8, 128)}   # q heads, kv heads, head dim
EXTEND = [(1, 0, 4096), (8, 0, 1024), (32, 0, 256), (4, 2048, 512)]  # batch, cached prefix, new tokens
DECODE = [(1, 32768), (8, 4096), (64, 2048), (256, 1024)]         # batch, context
TINY_EXTEND, TINY_DECODE = [(2, 0, 24), (1, 16, 8)], [(2, 40)]
PAGE = 16
TOL = 2e-2    # atol and rtol: bf16 outputs of two fp32-accumulating kernels that round P to bf16


@dataclass
class Row:
    kind: str            # extend | decode
    layout: str
    batch: int
    prefix: int          # cached tokens before the new ones (decode: context - 1)
    new: int             # new tokens per request (decode: 1)
    ours_ms: float
    sdpa_ms: float
    sdpa: str            # which dense path the reference took
    speedup: float       # sdpa_ms / ours_ms: above 1, the kernel is faster
    tflops: float        # achieved by the kernel
    gbps: float          # K/V bytes read by the kernel per second
    max_err: float
    ok: bool


def paged_pool(k: torch.Tensor, v: torch.Tensor, gen: torch.Generator):
    """Dense k, v [B, S, Hkv, D] -> pool pair [B*S/PAGE, PAGE, Hkv, D] and a shuffled block table."""
    b, s, h, d = k.shape
    per_seq = math.ceil(s / PAGE)
    pad = per_seq * PAGE - s
    k, v = (F.pad(x, (0, 0, 0, 0, 0, pad)) for x in (k, v))
    order = torch.randperm(b * per_seq, generator=gen, device=k.device)  # logical -> physical block
    k_cache, v_cache = torch.empty_like(k).view(-1, PAGE, h, d), torch.empty_like(v).view(-1, PAGE, h, d)
    k_cache[order], v_cache[order] = k.reshape(-1, PAGE, h, d), v.reshape(-1, PAGE, h, d)
    return k_cache, v_cache, order.view(b, per_seq).to(torch.int32)


def sdpa_call(q, k, v, prefix: int) -> Callable[[], torch.Tensor]:
    """q [B, Hq, n, D], k/v [B, Hkv, S, D]: causal, aligned lower-right when there is a cached prefix."""
    group = q.shape[1] // k.shape[1]
    if prefix:
        k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
        mask = causal_lower_right(q.shape[2], k.shape[2])
        return lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=group > 1)


def decode_call(q, k, v) -> Callable[[], torch.Tensor]:
    """Dense decode with the query heads of a group as rows, so K/V are read once: [B, Hkv, group, D]."""
    b, hq, d = q.shape
    grouped = q.view(b, k.shape[1], hq // k.shape[1], d)
    return lambda: F.scaled_dot_product_attention(grouped, k, v).reshape(b, hq, d)


def pick_backend(call: Callable[[], torch.Tensor]) -> tuple[list[SDPBackend], str, torch.Tensor]:
    """The first of flash, efficient, any that runs `call`: (backends, name, output)."""
    for backends, name in (([SDPBackend.FLASH_ATTENTION], "flash"),
                           ([SDPBackend.EFFICIENT_ATTENTION], "efficient")):
        try:
            with sdpa_kernel(backends):
                return backends, name, call()
        except RuntimeError:
            continue
    every = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
    return every, "math", call()


def compare(ours: Callable[[], torch.Tensor], dense: Callable[[], torch.Tensor],
            to_dense: Callable[[torch.Tensor], torch.Tensor], tiny: bool) -> tuple[float, float, str, float, bool]:
    """(ours_ms, sdpa_ms, sdpa backend, max abs difference, within TOL)."""
    backends, name, ref = pick_backend(dense)
    got, ref = to_dense(ours()).float(), ref.float()
    err, ok = (got - ref).abs().max().item(), torch.allclose(got, ref, atol=TOL, rtol=TOL)
    with sdpa_kernel(backends):
        sdpa_ms = timer(dense, tiny)
    return timer(ours, tiny), sdpa_ms, name, err, ok


def timer(fn: Callable[[], object], tiny: bool) -> float:
    """Median milliseconds per call (triton's do_bench on CUDA; one wall-clock call in tiny mode)."""
    if tiny:
        start = time.perf_counter()
        fn()
        return 1e3 * (time.perf_counter() - start)
    import triton.testing
    return triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median")


def bench_extend(layout: str, batch: int, prefix: int, new: int, device, dtype, tiny: bool) -> Row:
    from engine.kernels.extend_attention import extend_attention
    hq, hkv, d = LAYOUTS[layout]
    gen = torch.Generator(device).manual_seed(batch * 7 + new)
    total = prefix + new
    q = randn(batch, new, hq, d, gen=gen, dtype=dtype)
    k, v = (randn(batch, total, hkv, d, gen=gen, dtype=dtype) for _ in range(2))
    k_cache, v_cache, table = paged_pool(k, v, gen)
    prefix_lens = torch.full((batch,), prefix, dtype=torch.int32, device=device)
    seq_lens = prefix_lens + new
    cu = torch.arange(0, (batch + 1) * new, new, dtype=torch.int32, device=device)
    flat = q.view(-1, hq, d)
    ours = lambda: extend_attention(flat, k_cache, v_cache, table, cu, prefix_lens, seq_lens, max_q_len=new)
    dense = sdpa_call(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), prefix)
    ours_ms, sdpa_ms, name, err, ok = compare(ours, dense, lambda o: o.view(batch, new, hq, d).transpose(1, 2), tiny)
    flops = 4 * batch * hq * d * new * (prefix + (new + 1) / 2)        # QK^T and PV over the causal band
    kv_bytes = 2 * batch * total * hkv * d * k.element_size()
    return Row("extend", layout, batch, prefix, new, ours_ms, sdpa_ms, name, sdpa_ms / ours_ms,
               flops / ours_ms / 1e9, kv_bytes / ours_ms / 1e6, err, ok)


def bench_decode(layout: str, batch: int, context: int, device, dtype, tiny: bool) -> Row:
    from engine.kernels.decode_attention import decode_attention
    hq, hkv, d = LAYOUTS[layout]
    gen = torch.Generator(device).manual_seed(batch * 13 + context)
    q = randn(batch, hq, d, gen=gen, dtype=dtype)
    k, v = (randn(batch, context, hkv, d, gen=gen, dtype=dtype) for _ in range(2))
    k_cache, v_cache, table = paged_pool(k, v, gen)
    seq_lens = torch.full((batch,), context, dtype=torch.int32, device=device)
    ours = lambda: decode_attention(q, k_cache, v_cache, table, seq_lens, max_seq_len=context)
    dense = decode_call(q, k.transpose(1, 2), v.transpose(1, 2))
    ours_ms, sdpa_ms, name, err, ok = compare(ours, dense, lambda o: o, tiny)
    flops = 4 * batch * hq * d * context
    kv_bytes = 2 * batch * context * hkv * d * k.element_size()
    return Row("decode", layout, batch, context - 1, 1, ours_ms, sdpa_ms, name, sdpa_ms / ours_ms,
               flops / ours_ms / 1e9, kv_bytes / ours_ms / 1e6, err, ok)


def randn(*shape: int, gen: torch.Generator, dtype: torch.dtype) -> torch.Tensor:
    return torch.randn(shape, generator=gen, device=gen.device).to(dtype)


def bench_all(device: torch.device, dtype: torch.dtype, tiny: bool) -> list[dict]:
    """Every layout x case; tiny: a few toy shapes for the CPU interpreter."""
    extend, decode = (TINY_EXTEND, TINY_DECODE) if tiny else (EXTEND, DECODE)
    rows = []
    for layout in LAYOUTS:
        rows += [bench_extend(layout, *case, device, dtype, tiny) for case in extend]
        rows += [bench_decode(layout, *case, device, dtype, tiny) for case in decode]
    return [asdict(r) for r in rows]
