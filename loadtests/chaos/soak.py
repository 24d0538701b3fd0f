"""`cachegate soak`: a gateway process under a steady request rate for a set time (10 minutes by
default), its memory sampled throughout. Verdict: after warm-up, memory grows no more than the
configured cache bounds allow, and the caches never pass their bounds. Loopback only, bounded.

It starts its own stand-in upstream and gateway (`cachegate serve` with small cache bounds), so it
measures the gateway, not a model. Prints JSON and a table, draws memory over time."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx
import yaml
from tqdm import tqdm

TOKEN = "soak-admin-token"
SLACK_BYTES = 48 * 2**20       # allocator and interpreter slack on top of the cache bounds


@dataclass
class SoakResult:
    duration_s: float
    requests: int
    errors: int
    bound_bytes: int
    rss_mb: list[tuple[float, float]] = field(default_factory=list)
    store_bytes_max: dict[str, int] = field(default_factory=dict)
    store_entries_max: dict[str, int] = field(default_factory=dict)
    growth_mb: float = 0.0
    verdict: str = "fail"
    reasons: list[str] = field(default_factory=list)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--duration", type=float, default=600.0, help="seconds (default 600)")
    p.add_argument("--rate", type=float, default=50.0, help="requests per second")
    p.add_argument("--unique-share", type=float, default=0.5, help="share of never-seen questions")
    p.add_argument("--exact-bytes", type=int, default=2 * 2**20, help="exact memory store bound")
    p.add_argument("--semantic-entries", type=int, default=2000, help="semantic entry bound")
    p.add_argument("--semantic-bytes", type=int, default=4 * 2**20, help="semantic byte bound")
    p.add_argument("--out", default="soak-out", help="folder for the JSON and the PNG")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the table")


def run(args: argparse.Namespace) -> int:
    result = soak(args.duration, args.rate, args.unique_share, args.exact_bytes, args.semantic_entries,
                  args.semantic_bytes)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "soak.json").write_text(json.dumps(asdict(result), indent=1))
    plot(result, out / "soak.png")
    print(json.dumps(asdict(result) | {"rss_mb": result.rss_mb[-1:]}) if args.json else table(result))
    return 0 if result.verdict == "pass" else 1


def soak(duration_s: float, rate: float, unique_share: float, exact_bytes: int, semantic_entries: int,
         semantic_bytes: int) -> SoakResult:
    with tempfile.TemporaryDirectory(prefix="cachegate-soak-") as folder, Processes() as procs:
        upstream = procs.start([sys.executable, "-m", "loadtests.chaos.standin", "--port", str(free_port())])
        up_port = int(upstream.args[-1])
        config = gateway_config(Path(folder), up_port, exact_bytes, semantic_entries, semantic_bytes)
        port = free_port()
        gateway = procs.start([sys.executable, "-m", "cachegate", "serve", "--config", config, "--port", str(port),
                               "--log-level", "warning"])
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url)
        result = SoakResult(duration_s, 0, 0, exact_bytes + semantic_bytes)
        drive(url, gateway.pid, duration_s, rate, unique_share, result)
    judge(result, semantic_entries)
    return result


def gateway_config(folder: Path, upstream_port: int, exact_bytes: int, semantic_entries: int,
                   semantic_bytes: int) -> str:
    config = {
        "models": [{"name": "standin", "backend": "upstream", "replicas": [f"http://127.0.0.1:{upstream_port}/v1"]}],
        "cache": {"exact": {"max_bytes": exact_bytes},
                  "semantic": {"max_entries": semantic_entries, "max_bytes": semantic_bytes, "policy": "cosine"}},
        "admin": {"token": TOKEN},
    }
    path = folder / "soak.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def drive(url: str, pid: int, duration_s: float, rate: float, unique_share: float, result: SoakResult) -> None:
    import random
    rng, started, next_sample = random.Random(0), time.monotonic(), 0.0
    with httpx.Client(base_url=url, timeout=30) as client, tqdm(total=int(duration_s), unit="s") as bar:
        while (elapsed := time.monotonic() - started) < duration_s:
            question = f"unique question {result.requests}" if rng.random() < unique_share else \
                f"common question {rng.randrange(50)}"
            body = {"model": "standin", "messages": [{"role": "user", "content": question}]}
            try:
                if client.post("/v1/chat/completions", json=body).status_code != 200:
                    result.errors += 1
            except httpx.HTTPError:
                result.errors += 1
            result.requests += 1
            if elapsed >= next_sample:
                sample(client, pid, elapsed, result)
                next_sample = elapsed + max(1.0, duration_s / 120)
                bar.update(int(elapsed) - bar.n)
            time.sleep(max(0.0, started + result.requests / rate - time.monotonic()))
        sample(client, pid, time.monotonic() - started, result)


def sample(client: httpx.Client, pid: int, elapsed: float, result: SoakResult) -> None:
    result.rss_mb.append((round(elapsed, 1), rss_mb(pid)))
    stores = client.get("/admin/api/stats", headers={"authorization": f"Bearer {TOKEN}"}).json()["stores"]
    for name, s in stores.items():
        result.store_bytes_max[name] = max(result.store_bytes_max.get(name, 0), s.get("bytes") or 0)
        result.store_entries_max[name] = max(result.store_entries_max.get(name, 0), s.get("entries") or 0)


def judge(result: SoakResult, semantic_entries: int) -> None:
    warm = [mb for t, mb in result.rss_mb if t >= result.duration_s * 0.2] or [mb for _, mb in result.rss_mb]
    result.growth_mb = round(max(warm) - warm[0], 1)
    allowed_mb = (result.bound_bytes + SLACK_BYTES) / 2**20
    if result.growth_mb > allowed_mb:
        result.reasons.append(f"memory grew {result.growth_mb} MiB after warm-up (allowed {allowed_mb:.0f})")
    if result.store_entries_max.get("semantic", 0) > semantic_entries:
        result.reasons.append(f"semantic entries reached {result.store_entries_max['semantic']} > {semantic_entries}")
    if result.errors:
        result.reasons.append(f"{result.errors} requests failed")
    result.verdict = "fail" if result.reasons else "pass"


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return round(next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024, 1)


def table(result: SoakResult) -> str:
    rows = [("verdict", result.verdict.upper() + "".join(f"\n  - {r}" for r in result.reasons)),
            ("requests / errors", f"{result.requests} / {result.errors}"),
            ("memory after warm-up", f"+{result.growth_mb} MiB (cache bounds {result.bound_bytes / 2**20:.0f} MiB)"),
            ("rss first / last", f"{result.rss_mb[0][1]} / {result.rss_mb[-1][1]} MiB"),
            ("store bytes max", json.dumps(result.store_bytes_max)),
            ("store entries max", json.dumps(result.store_entries_max))]
    return "\n".join(f"{k:<22} {v}" for k, v in rows)


def plot(result: SoakResult, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.plot([t for t, _ in result.rss_mb], [mb for _, mb in result.rss_mb], label="gateway RSS (MiB)")
    ax.set_xlabel("seconds")
    ax.set_title(f"soak: {result.requests} requests, verdict {result.verdict}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the gateway at {url} did not become healthy")


class Processes:
    """Child processes that are always stopped, whatever happens."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []

    def start(self, argv: list[str]) -> subprocess.Popen:
        env = os.environ | {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *_: object) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
