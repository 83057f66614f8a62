"""Whether the simulator's step runs compiled (mypyc) or from its Python sources.

``setup.py`` compiles the step's modules with mypyc at install time and records, in
``_step_build.json``, a hash of each source it compiled. Python would import a compiled
module in preference to its source; this module decides, once, before any of them is
imported (``mirrorcraft/__init__.py`` calls ``choose``), and loads every one of them from
its source when:

- ``MIRRORCRAFT_PURE_PYTHON=1`` is set (the reference, as for the C modules);
- a source was edited after the build (an editable install would otherwise run the old
  compiled code; the sources are what the repository says, so they win);
- a compiled module or the group's shared library is missing (a failed optional build).

Any other compiled file of a ``mirrorcraft`` module that has a source (left by an earlier
build) is never loaded. It is all or none: the compiled modules call each other directly, so a mix of compiled
and source modules is never loaded. The two give the same results (the tests run the
recorded grids both ways); only the speed differs.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

MODULES = (
    "mirrorcraft.body.body",
    "mirrorcraft.body.draws",
    "mirrorcraft.body.paths",
    "mirrorcraft.body.inventory",
    "mirrorcraft.body.wear",
    "mirrorcraft.body.blockstate",
    "mirrorcraft.body.observation",
    "mirrorcraft.body.events",
    "mirrorcraft.body.actions",
    "mirrorcraft.body.results",
    "mirrorcraft.body.skills.__init__",
    "mirrorcraft.body.skills.crafting",
    "mirrorcraft.body.skills.entities",
    "mirrorcraft.body.skills.items",
    "mirrorcraft.body.skills.mining",
    "mirrorcraft.body.skills.movement",
    "mirrorcraft.world.state",
    "mirrorcraft.world.placed",
    "mirrorcraft.world.index",
    "mirrorcraft.world.census_native",
    "mirrorcraft.rules.ruleset",
    "mirrorcraft.rules.loot",
    "mirrorcraft.rules.loot_conditions",
    "mirrorcraft.rules.loot_numbers",
    "mirrorcraft.evaluator.encounters",
    "mirrorcraft.backends.sim",
)
"""The step's modules that ``setup.py`` compiles (a package as ``pkg.__init__``): the body,
its skills, the world's state and searches, the loot interpreter and the encounter log.
Not the evaluator and its milestones: the design loop observes the evaluator's calls, and
the real-server backend subclasses its milestones (compiled classes allow neither)."""
GROUP = "mirrorcraft_step"
"""mypyc's group: the shared library is ``<GROUP>__mypyc``."""
MANIFEST = "_step_build.json"
STATE = "not built"
"""``on``, ``off``, ``stale`` or ``not built`` (set by ``choose``)."""
_CHOSEN = False
_PACKAGE = Path(__file__).resolve().parent


class _SourceFirst(importlib.abc.MetaPathFinder):
    """Finds every ``mirrorcraft`` module that has a ``.py`` source as that source, except
    the compiled modules allowed to load: a compiled module of another build (one left
    behind by an earlier install, or of a module no longer compiled) never loads."""

    def __init__(self, compiled: frozenset[str]):
        self.compiled = compiled

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("mirrorcraft.") or fullname in self.compiled:
            return None
        base = _PACKAGE.joinpath(*fullname.split(".")[1:])
        package = base / "__init__.py"
        if package.is_file():
            return importlib.util.spec_from_file_location(
                fullname, package, submodule_search_locations=[str(base)]
            )
        source = base.with_suffix(".py")
        if source.is_file():
            return importlib.util.spec_from_file_location(fullname, source)
        return None  # a hand-written C module (no source): the usual finders


def _source_of(entry: str) -> Path:
    """``mirrorcraft.body.body`` -> ``<package>/body/body.py``."""
    return _PACKAGE.joinpath(*entry.split(".")[1:]).with_suffix(".py")


def _import_name(entry: str) -> str:
    return entry.removesuffix(".__init__")


def _compiled(entry: str) -> bool:
    source = _source_of(entry)
    return any(
        source.with_name(source.stem + suffix).is_file()
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
    )


def _state(manifest: dict[str, object]) -> str:
    modules = manifest.get("modules")
    if not isinstance(modules, dict) or sorted(modules) != sorted(MODULES):
        return "not built"
    root = _PACKAGE.parent
    if not all(map(_compiled, MODULES)) or not any(
        (root / f"{GROUP}__mypyc{s}").is_file() for s in importlib.machinery.EXTENSION_SUFFIXES
    ):
        return "not built"
    if os.environ.get("MIRRORCRAFT_PURE_PYTHON", "") not in ("", "0"):
        return "off"
    for entry, digest in modules.items():
        source = _source_of(entry)
        if not source.is_file() or hashlib.sha256(source.read_bytes()).hexdigest() != digest:
            return "stale"
    return "on"


def choose() -> str:
    """Decide (once) and return the state; later calls return the first decision."""
    global STATE, _CHOSEN
    if _CHOSEN:
        return STATE
    _CHOSEN = True
    try:
        manifest = json.loads((_PACKAGE / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    STATE = _state(manifest) if isinstance(manifest, dict) else "not built"
    on = frozenset(map(_import_name, MODULES)) if STATE == "on" else frozenset()
    sys.meta_path.insert(0, _SourceFirst(on))
    return STATE


def summary() -> str:
    """A phrase for ``mirrorcraft --version``: which step runs."""
    return {
        "on": "step: compiled (mypyc)",
        "off": "step: built, off (MIRRORCRAFT_PURE_PYTHON is set): Python sources",
        "stale": "step: Python sources (edited since the compiled build; reinstall to compile)",
        "not built": "step: Python sources (not compiled)",
    }[STATE]
