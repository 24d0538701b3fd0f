"""The `cachegate` command. Each verb lives in its own module with `add_arguments(parser)` and
`run(args)`; only the module of the verb being run is imported, so `cachegate --help` stays fast.

The gateway's own verbs are listed here; other packages add theirs through the `cachegate.commands` entry
point group (a table like `VERBS`): the load tests and benchmarks register `bench`, `loadtest`, `soak` and
`drill` that way (`loadtests/commands.py`), so the gateway never imports them."""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from importlib.metadata import entry_points

VERBS: dict[tuple[str, ...], tuple[str, str]] = {
    ("serve",): ("cachegate.commands.serve", "serve the gateway (OpenAI-compatible API)"),
    ("engine",): ("cachegate.commands.engine", "serve one engine as its own OpenAI-compatible server"),
    ("calibrate",): ("cachegate.commands.calibrate", "fit the semantic similarity policy to a target false-hit rate"),
    ("eval", "semantic"): ("cachegate.commands.evaluate", "measure the semantic policy on labeled data"),
    ("eval", "distill"): ("cachegate.commands.distill_eval", "a distilled small model beside the base: agreement, tokens/s"),
    ("train", "matcher"): ("cachegate.matcher_train.command", "rebuild the semantic matcher from the dev data"),
    ("router", "train"): ("cachegate.commands.router", "fit the learned router on labeled examples"),
    ("router", "eval"): ("cachegate.commands.router", "measure a learned router on labeled examples"),
    ("stats",): ("cachegate.commands.stats", "the dashboard's summary of a running gateway, as a table"),
    ("keys",): ("cachegate.commands.keys", "API keys kept in Redis: add, revoke, list"),
    ("answers",): ("cachegate.commands.answers", "curated answers: import a JSONL/CSV library, export, list, delete"),
    ("distill",): ("cachegate.commands.distill", "fine-tune the small model (LoRA) on the large tier's logged answers"),
}


def verbs() -> dict[tuple[str, ...], tuple[str, str]]:
    """The gateway's verbs and those registered by installed packages (entry point group `cachegate.commands`)."""
    found = dict(VERBS)
    for registered in entry_points(group="cachegate.commands"):
        found.update(registered.load())
    return found


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # before torch loads: on shared cores threads sleep
    args = build_parser(argv).parse_args(argv)
    return importlib.import_module(args.module).run(args)


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cachegate", description=__doc__)
    top = parser.add_subparsers(dest="verb", required=True)
    groups: dict[str, argparse._SubParsersAction] = {}
    for path, (module, text) in verbs().items():
        if len(path) == 1:
            verb = top.add_parser(path[0], help=text)
        else:
            if path[0] not in groups:
                groups[path[0]] = top.add_parser(path[0], help=f"{path[0]} ...").add_subparsers(
                    dest="what", required=True)
            verb = groups[path[0]].add_parser(path[1], help=text)
        verb.set_defaults(module=module)
        if tuple(argv[:len(path)]) == path:
            importlib.import_module(module).add_arguments(verb)
    return parser


if __name__ == "__main__":
    sys.exit(main())
