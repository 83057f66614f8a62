"""The import direction of DESIGN.md, checked on every module (function-level imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

import mirrorcraft

ROOT = Path(mirrorcraft.__file__).parent
FORBIDDEN = {
    "rules": ("agents", "llm", "runner", "report", "analysis", "commands", "design"),
    "world": ("agents", "llm", "runner", "report", "analysis", "commands", "design"),
    "body": ("agents", "llm", "runner", "report", "analysis", "commands"),
    "evaluator": ("agents", "llm", "runner", "report", "analysis", "commands"),
    "datapack": ("backends", "agents", "runner", "report", "analysis", "commands"),
    "worldgen": ("backends", "agents", "llm", "runner", "report", "analysis", "commands", "design"),
    "backends": ("agents", "llm", "runner", "report", "analysis", "commands", "design"),
    "llm": ("agents", "runner", "report", "analysis", "commands"),
    "agents": ("runner", "report", "analysis", "commands"),
    "analysis": ("report", "commands"),
    "report": ("commands",),
}


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return {m for m in out if m.split(".")[0] == "mirrorcraft"}


def test_lower_layers_never_import_higher_ones() -> None:
    problems = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        layer = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for module in _imports(path):
            parts = module.split(".")
            target = parts[1] if len(parts) > 1 else ""
            if target == "cli":
                problems.append(f"{rel} imports the CLI ({module})")
            if target in FORBIDDEN.get(layer, ()):
                problems.append(f"{rel} ({layer}) imports {module}")
    assert not problems, "\n".join(problems)


def test_no_modules_import_each_other_in_a_circle() -> None:
    """Module-level and function-level imports alike: the import graph has no cycle."""
    names = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        names[".".join(parts)] = path

    def targets(path: Path) -> set[str]:
        # "from package import submodule" imports the submodule, not the package's __init__.
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                out |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = {f"{node.module}.{a.name}" for a in node.names} & set(names)
                out |= subs or {node.module}
        return out

    graph = {m: {i for i in targets(p) if i in names and i != m} for m, p in names.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert not cycles, cycles
