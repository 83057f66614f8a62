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
