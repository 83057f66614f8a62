"""The compiled step (mypyc, ``setup.py``) against its own Python sources.

Where the step is compiled, the whole test suite runs it; ``test_compiled_core`` runs the
recorded grid with ``MIRRORCRAFT_PURE_PYTHON=1``, which loads every step module from its
source, and ``test_perf_reference`` the same grid compiled: both must be the recorded
bytes. Here: which one is loaded, when, and that a mix never is.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mirrorcraft import step_build

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
built = step_build.STATE in ("on", "off", "stale")
MODULES = sorted(m.removesuffix(".__init__") for m in step_build.MODULES) if built else []
PROBE = (
    "import json, sys\n"
    "from mirrorcraft import step_build\n"
    "import mirrorcraft.backends.sim, mirrorcraft.body.body, mirrorcraft.body.skills\n"
    f"mods = {MODULES!r}\n"
    "print(json.dumps([step_build.STATE, {m: sys.modules[m].__file__ for m in mods\n"
    "    if m in sys.modules}]))\n"
)
needs_build = pytest.mark.skipif(not built, reason="the step is not compiled in this install")


def _probe(src: Path, pure: bool = False) -> tuple[str, dict[str, str]]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("MIRRORCRAFT_PURE_PYTHON", None)
    if pure:
        env["MIRRORCRAFT_PURE_PYTHON"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    state, files = json.loads(out.stdout.splitlines()[-1])
    return state, files


def _compiled(path: str) -> bool:
    return path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def test_the_step_is_compiled_where_mypyc_and_a_compiler_are() -> None:
    """The build is optional, so a failure is silent at install time: here it is not
    (CI installs mypyc and has a compiler, so a module mypyc cannot build fails this)."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the step runs from its sources")
    if os.environ.get("MIRRORCRAFT_NO_MYPYC", "") not in ("", "0"):
        pytest.skip("MIRRORCRAFT_NO_MYPYC was set: the step runs from its sources")
    if os.environ.get("MIRRORCRAFT_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("MIRRORCRAFT_PURE_PYTHON is set")
    assert step_build.STATE == "on", step_build.summary()


@needs_build
def test_compiled_or_sources_all_together() -> None:
    state, files = _probe(SRC)
    assert state == "on" and files and all(map(_compiled, files.values())), files
    state, files = _probe(SRC, pure=True)
    assert state == "off" and files and not any(map(_compiled, files.values())), files


@needs_build
def test_a_source_edited_after_the_build_is_what_runs(tmp_path: Path) -> None:
    """An editable install keeps the compiled modules when a source changes: the edited
    source must run (and so every step module from source: compiled modules call each
    other directly), and ``--version`` says the build is stale."""
    copy = tmp_path / "src"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "build"))
    body = copy / "mirrorcraft" / "body" / "body.py"
    body.write_text(body.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    state, files = _probe(copy)
    assert state == "stale" and files and not any(map(_compiled, files.values())), files
    assert files["mirrorcraft.body.body"] == str(body)
    version = subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", "--version"],
        env={**os.environ, "PYTHONPATH": str(copy)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "edited since the compiled build" in version.stdout

    (copy / "mirrorcraft" / step_build.MANIFEST).write_text("{not json", encoding="utf-8")
    state, files = _probe(copy)
    assert state == "not built" and not any(map(_compiled, files.values())), files


@needs_build
def test_a_missing_compiled_module_means_sources(tmp_path: Path) -> None:
    """A partly failed optional build (one module's extension missing) loads no compiled module."""
    copy = tmp_path / "src"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "build"))
    for so in (copy / "mirrorcraft" / "body").glob("wear.*"):
        if _compiled(str(so)):
            so.unlink()
    state, files = _probe(copy)
    assert state == "not built" and files and not any(map(_compiled, files.values())), files
