"""The `cachegate` verbs that live with the load tests and benchmarks. The gateway does not import them: this
table is registered under the `cachegate.commands` entry point (pyproject.toml) and read by
`cachegate.commands.main` when it builds its parser. Each module has `add_arguments(parser)` and `run(args)`."""
from __future__ import annotations

VERBS: dict[tuple[str, ...], tuple[str, str]] = {
    ("bench", "semantic"): ("loadtests.bench_semantic", "time semantic lookups"),
    ("bench", "engine"): ("loadtests.bench_engine", "the engine against transformers, side by side"),
    ("bench", "gateway"): ("loadtests.bench_gateway", "cache hits against a bare FastAPI echo, side by side"),
    ("bench", "structured"): ("loadtests.bench_structured",
                              "valid JSON, schema and tool-call rates with and without grammars; masking cost"),
    ("loadtest",): ("loadtests.loadgen.command", "drive a gateway on loopback with a workload; report hits"),
    ("soak",): ("loadtests.chaos.soak", "a gateway under steady load for minutes: memory stays bounded"),
    ("drill", "false-hits"): ("loadtests.verify_drill", "near misses arrive mid-run: verification holds the target"),
}
