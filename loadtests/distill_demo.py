"""End to end on the customer-service workload: the large tier answers it through a gateway that logs its
answers; `cachegate distill` fits the small model to them; a gateway serving the distilled model beside
the base answers the held-out requests again, and an `auto` load test shows the routing split and savings.

`python -m loadtests.distill_demo --out distill-out` prints a table and writes distill-out/demo.json.
Each step is skipped when its output is already there (delete the folder to start over).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import httpx
import yaml

from loadtests.chaos.soak import Processes, free_port, wait_healthy

CLI = [sys.executable, "-m", "cachegate"]
ADMIN = "distill-demo"
PRICES = {"small": 0.1, "large": 1.0}       # per 1k tokens, in and out: illustrative, for the savings


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="distill-out")
    p.add_argument("--requests", type=int, default=1200, help="workload requests the large tier answers")
    p.add_argument("--users", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--auto-requests", type=int, default=300, help="requests of the closing 'auto' run")
    p.add_argument("--target", type=float, default=0.5, help="agreement rate the small tier must keep")


def gateway(out: Path, name: str, config: dict, procs: Processes) -> str:
    port = free_port()
    path = out / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config | {"server": {"port": port}}))
    procs.start([*CLI, "serve", "--config", str(path)])
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, timeout_s=600)
    return url


def loadtest(url: str, model: str, requests: int, users: int, seed: int, out: Path) -> dict:
    argv = [*CLI, "loadtest", "--workload", "customer-service", "--url", url, "--model", model,
            "--users", str(users), "--max-requests", str(requests), "--duration", "7200", "--seed", str(seed),
            "--admin-token", ADMIN, "--json", "--no-progress", "--out", str(out)]
    return json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])


def collect(args: argparse.Namespace, out: Path) -> dict:
    config = {"cache": {"semantic": {"enabled": False}}, "admin": {"token": ADMIN},
              "distill": {"log": "file", "log_path": str(out / "log")}}
    with Processes() as procs:
        url = gateway(out, "collect", config, procs)
        return loadtest(url, "large", args.requests, args.users, args.seed, out / "loadtest-collect")


def distill(args: argparse.Namespace, out: Path) -> dict:
    subprocess.run([*CLI, "distill", "--from", str(out / "log"), "--out", str(out / "model"), "--epochs",
                    str(args.epochs), "--seed", str(args.seed), "--no-progress"], check=True)
    return json.loads((out / "model" / "distill.json").read_text())


def serving_config(out: Path, threshold: float | None) -> dict:
    priced = {"price_in_per_1k": PRICES["small"], "price_out_per_1k": PRICES["small"]}
    return {"cache": {"semantic": {"enabled": False}, "exact": {"enabled": False}}, "admin": {"token": ADMIN},
            "models": [{"name": "smollm2-distilled", "tier": "small", "path": str((out / "model").resolve()), **priced},
                       {"name": "smollm2-135m-instruct", "tier": "small", **priced},
                       {"name": "gemma3-270m", "tier": "large", "path": "packaged:gemma3-270m",
                        "price_in_per_1k": PRICES["large"], "price_out_per_1k": PRICES["large"]}],
            "routing": {"complexity": {"threshold": threshold if threshold is not None else 1e9}}}


def rerun(args: argparse.Namespace, out: Path) -> dict:
    from cachegate.distill.agreement import agreements, minilm_embed, summary
    from cachegate.distill.routing_share import router_score, share_at
    from cachegate.distill.sinks import read_entries
    from loadtests.distill_replay import replay
    held = [e for e in read_entries(out / "model" / "held_out.jsonl") if e.messages is not None]
    scores, embed, report = [router_score(e) for e in held], minilm_embed(), {"held_out": len(held)}
    with Processes() as procs:
        url = gateway(out, "serve-replay", serving_config(out, None), procs)
        for label, model in (("base", "smollm2-135m-instruct"), ("distilled", "smollm2-distilled")):
            rows = agreements(replay(url, model, held), [e.answer for e in held], embed)
            report[label] = summary(rows, 0.8)
            report[label]["share"] = share_at(scores, [r.agrees(0.8) for r in rows], args.target).__dict__
    return report


def auto_run(args: argparse.Namespace, out: Path, threshold: float | None) -> dict:
    with Processes() as procs:
        url = gateway(out, "serve-auto", serving_config(out, threshold), procs)
        run = loadtest(url, "auto", args.auto_requests, args.users, args.seed + 1, out / "loadtest-auto")
        totals = httpx.get(f"{url}/admin/api/stats", headers={"authorization": f"Bearer {ADMIN}"}).json()["totals"]
        routes = [line for line in httpx.get(f"{url}/metrics").text.splitlines()
                  if line.startswith(("cachegate_routes_total", "cachegate_routing_saved_total"))]
    return {"threshold": threshold, "requests": run["requests"], "errors": run["errors"], "routes": totals["routes"],
            "routing_cost_saved": totals["routing_cost_saved"], "cost": totals["cost"], "metrics": routes}


def step(out: Path, name: str, make) -> dict:
    path = out / f"{name}.json"
    if path.is_file():
        return json.loads(path.read_text())
    result = make()
    path.write_text(json.dumps(result, indent=1, default=str))
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m loadtests.distill_demo", description=__doc__)
    add_arguments(p)
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    demo = {"collect": step(out, "step-collect", lambda: collect(args, out)),
            "distill": step(out, "step-distill", lambda: distill(args, out))}
    demo["rerun"] = step(out, "step-rerun", lambda: rerun(args, out))
    threshold = demo["rerun"]["distilled"]["share"]["threshold"]
    demo["auto"] = step(out, "step-auto", lambda: auto_run(args, out, None if threshold == float("inf") else threshold))
    (out / "demo.json").write_text(json.dumps(demo, indent=1, default=str))
    print(table(demo, args.target))
    return 0


def table(demo: dict, target: float) -> str:
    r, t = demo["rerun"], demo["distill"]["training"]
    lines = [(f"collected: {demo['collect']['requests']} requests, large tier answering; "
              f"distilled on {demo['distill']['train_requests']} in {t['seconds']:.0f} s "
              f"({demo['distill']['threads']} threads); {r['held_out']} held-out requests replayed"),
             f"{'':<30}{'base':>10}{'distilled':>12}"]
    for name, key in (("ROUGE-L", "rouge_l"), ("embedding similarity", "similarity"),
                      ("exact match (short)", "exact_match"), ("agreement rate (cos>=0.8)", "agree_rate")):
        lines.append(f"{name:<30}{r['base'][key]:>10.3f}{r['distilled'][key]:>12.3f}")
    lines.append(f"{f'share small at agreement {target}':<30}{r['base']['share']['share']:>10.2%}"
                 f"{r['distilled']['share']['share']:>12.2%}")
    a = demo["auto"]
    lines.append(f"auto run at threshold {a['threshold']}: routes {a['routes']}, "
                 f"saved by routing {a['routing_cost_saved']:.4f} of {a['cost'] + a['routing_cost_saved']:.4f}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
