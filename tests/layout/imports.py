"""The import graph of the repository's packages, read from the source (nothing is imported)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cachegate", "engine", "policies", "loadtests")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The repository modules a file imports, at any depth (function-local imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(path, set(mods)) - {name} for name, path in mods.items()}


def node_at(module: str, depth: int, packages: set[str]) -> str:
    """The folder `depth` names deep that holds `module`; a module in a shallower folder is its own node."""
    parts = module.split(".")
    folder = parts if module in packages else parts[:-1]
    return ".".join(parts[:depth]) if len(folder) >= depth else module


def folder_graph(depth: int) -> dict[str, set[str]]:
    g = graph()
    packages = {module_name(p) for p in ROOT.rglob("__init__.py") if p.parts[len(ROOT.parts)] in PACKAGES}
    folded: dict[str, set[str]] = {}
    for a, targets in g.items():
        na = node_at(a, depth, packages)
        for b in targets:
            nb = node_at(b, depth, packages)
            if na != nb and not nb.startswith(na + ".") and not na.startswith(nb + "."):
                folded.setdefault(na, set()).add(nb)
            elif na != nb and na.startswith(nb + "."):
                # a folder reading its parent package's own modules is fine; reading a package's __init__
                # counts as reading that package
                pass
    return folded


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in list(g):
        if v not in index:
            visit(v)
    return found
