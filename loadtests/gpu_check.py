"""`gpu_check`: the engine's GPU path on one CUDA machine, in under five minutes: the kernel tests
compiled for real, both attention kernels timed against SDPA (flash) on dense equivalents, and the
engine benchmark's quick mode on CUDA, eager and with CUDA graphs (`--cuda-graphs`), side by side.
Prints a table and a JSON line, writes the JSON and a PNG to --out, and exits non-zero when a kernel
test fails or a kernel disagrees with SDPA.

Run: `python -m loadtests.gpu_check [--skip-tests] [--skip-engine] [--out gpu-check]`.
`--dry-run` (any machine, CPU): interpreted kernels on toy shapes, one quick kernel test and the engine
benchmark's flags only. It checks this script's plumbing and says nothing about speed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 285               # the whole check, under five minutes
TESTS_TIMEOUT_S = 200        # compiling every kernel variant the tests use is most of it


def sh(args: list[str], timeout: float, env: dict | None = None) -> tuple[int, str, float]:
    """Run a command from the repository root: (exit code, stdout + stderr, seconds); 124 on timeout."""
    start = time.perf_counter()
    try:
        done = subprocess.run(args, check=False, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
        return done.returncode, done.stdout + done.stderr, time.perf_counter() - start
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out + f"\ntimed out after {timeout}s", time.perf_counter() - start


def kernel_tests(dry: bool) -> dict:
    """pytest on tests/kernels, compiled (TRITON_INTERPRET removed) unless dry."""
    env = dict(os.environ)
    if not dry:
        env.pop("TRITON_INTERPRET", None)
    # the ahead-of-time compile test is for machines without a GPU; here every kernel compiles for real
    target = (["tests/kernels/test_decode_attention.py::test_split_heuristic"] if dry
              else ["tests/kernels", "--deselect", "tests/kernels/test_compile_for_gpu.py"])
    code, out, seconds = sh([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *target],
                            TESTS_TIMEOUT_S, env)
    lines = [line for line in out.strip().splitlines() if line.strip()]
    failures = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    return {"ok": code == 0, "summary": lines[-1] if lines else "", "failures": failures[:20],
            "seconds": round(seconds, 1)}


def engine_bench(dry: bool, out: Path, timeout: float) -> dict:
    """`cachegate bench engine --quick` on CUDA, eager then with CUDA graphs, each in half the time left."""
    base = [sys.executable, "-m", "cachegate", "bench", "engine"]
    code, help_text, _ = sh(base + ["--help"], 60)
    if code != 0:
        return {"ran": False, "note": f"'cachegate bench engine --help' failed: {help_text[-300:]}"}
    if "--device" not in help_text:
        return {"ran": False, "note": "cachegate bench engine has no --device flag: not run on CUDA"}
    if dry:
        return {"ran": False, "note": "dry run: the benchmark takes --device; not run"}
    runs = {}
    for name, flags in (("eager", []), ("cuda_graphs", ["--cuda-graphs"])):
        args = ["--quick", "--device", "cuda", "--out", str(out / f"bench-engine-{name}"), *flags]  # dtype auto
        args += ["--json"] if "--json" in help_text else []
        code, text, seconds = sh(base + args, timeout / 2)
        summary = next((json.loads(line) for line in reversed(text.splitlines()) if line.startswith("{")), None)
        runs[name] = {"ok": code == 0, "seconds": round(seconds, 1), "result": summary,
                      "tail": "" if code == 0 else text[-1500:]}
    return {"ran": True, "ok": all(r["ok"] for r in runs.values()), **runs}


def kernel_timings(dry: bool) -> dict:
    from loadtests.kernel_bench import bench_all
    device = torch.device("cpu" if dry else "cuda")
    try:
        rows = bench_all(device, torch.float32 if dry else torch.bfloat16, tiny=dry)
    except Exception as e:  # noqa: BLE001 - a kernel that fails to compile or launch is a finding
        return {"ok": False, "error": f"{type(e).__name__}: {e}"[:2000], "rows": []}
    return {"ok": all(r["ok"] for r in rows), "rows": rows}


def table(rows: list[dict]) -> str:
    head = (f"{'kernel':7} {'layout':13} {'batch':>5} {'prefix':>6} {'new':>5} {'ours ms':>9} "
            f"{'sdpa ms':>9} {'sdpa':9} {'speedup':>7} {'TFLOP/s':>8} {'GB/s':>8} {'max err':>8} ok")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['kind']:7} {r['layout']:13} {r['batch']:>5} {r['prefix']:>6} {r['new']:>5} "
                     f"{r['ours_ms']:>9.3f} {r['sdpa_ms']:>9.3f} {r['sdpa']:9} {r['speedup']:>7.2f} "
                     f"{r['tflops']:>8.2f} {r['gbps']:>8.1f} {r['max_err']:>8.1e} {'yes' if r['ok'] else 'NO'}")
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> str:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no plot (matplotlib missing)"
    labels = [f"{r['kind'][:3]} {r['layout'].split('-')[0]} b{r['batch']} {r['prefix'] + r['new']}" for r in rows]
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(rows)), 4))
    ax.bar(labels, [r["speedup"] for r in rows], color=["C0" if r["kind"] == "extend" else "C1" for r in rows])
    ax.axhline(1.0, color="grey", linewidth=1)
    ax.set_ylabel("SDPA time / kernel time")
    ax.set_title("Triton attention kernels vs SDPA (above 1: kernel faster)")
    ax.tick_params(axis="x", rotation=60)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"plot: {path}"


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import triton
    report = {"dry_run": args.dry_run, "torch": torch.__version__, "triton": triton.__version__,
              "device": "cpu (interpreter)" if args.dry_run else torch.cuda.get_device_name()}
    report["kernel_tests"] = {"skipped": True} if args.skip_tests else kernel_tests(args.dry_run)
    report["kernels"] = kernel_timings(args.dry_run)
    left = BUDGET_S - (time.perf_counter() - start)
    report["engine_bench"] = {"skipped": True} if args.skip_engine else engine_bench(args.dry_run, out,
                                                                                      max(30.0, left))
    report["ok"] = report["kernels"]["ok"] and report["kernel_tests"].get("ok", True)
    report["seconds"] = round(time.perf_counter() - start, 1)
    (out / "gpu_check.json").write_text(json.dumps(report, indent=1))
    note = plot(report["kernels"]["rows"], out / "gpu_check.png") if report["kernels"]["rows"] else ""
    print(table(report["kernels"]["rows"]), "\n", note, "\n", json.dumps(report), sep="")
    return 0 if report["ok"] else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="CPU: check the plumbing on toy shapes")
    parser.add_argument("--skip-tests", action="store_true", help="do not run the kernel tests")
    parser.add_argument("--skip-engine", action="store_true", help="do not run the engine benchmark")
    parser.add_argument("--out", default="gpu-check", help="folder for the JSON and the PNG")
    args = parser.parse_args(argv)
    if args.dry_run:
        os.environ["TRITON_INTERPRET"] = "1"      # before any kernel module is imported
    elif not torch.cuda.is_available():
        print("gpu_check: no CUDA device here; use --dry-run to check the plumbing", file=sys.stderr)
        return 2
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
