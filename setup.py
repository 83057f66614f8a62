"""The compiled core's extensions (everything else is in pyproject.toml).

All of it is optional: without a C compiler, or when mypyc cannot build the step,
``pip install`` still succeeds and the Python reference code runs instead, slower, with
the same results (``docs/performance.md``, "The compiled core" and "The compiled step";
``mirrorcraft --version`` says which runs).

- Two hand-written C modules: the planners' unit costs and the nearby-block census.
- The compiled step: the simulator's step modules (``STEP_MODULES``) compiled from their
  own Python sources by mypyc. The sources stay the reference: ``mirrorcraft/step_build.py``
  loads them instead of the compiled modules when ``MIRRORCRAFT_PURE_PYTHON=1`` is set or
  when a source was edited after the build. ``MIRRORCRAFT_NO_MYPYC=1`` at install time
  skips it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"


def _step_build() -> ModuleType:
    """``mirrorcraft/step_build.py`` (standard library only), without importing the package."""
    spec = importlib.util.spec_from_file_location(
        "_step_build", SRC / "mirrorcraft" / "step_build.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STEP = _step_build()
STEP_MODULES = [m.replace(".", "/") + ".py" for m in STEP.MODULES]
"""Compiled by mypyc, in one group (one shared library)."""
STEP_MANIFEST = SRC / "mirrorcraft" / STEP.MANIFEST


def _step_extensions() -> list[Extension]:
    """The compiled step's extensions, or none (and no manifest) when they cannot be made."""
    STEP_MANIFEST.unlink(missing_ok=True)
    if os.environ.get("MIRRORCRAFT_NO_MYPYC", "") not in ("", "0"):
        return []
    if not any(arg.startswith(("build", "bdist", "editable", "install")) for arg in sys.argv):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("mirrorcraft: mypyc is not installed; the step runs as Python", file=sys.stderr)
        return []
    cwd = os.getcwd()
    os.chdir(SRC)  # module names come from paths relative to the source root
    try:
        extensions = mypycify(
            [
                # The build environment holds only the pinned build requirements: what it
                # lacks is typed as Any, which the project's strict checks would refuse.
                "--ignore-missing-imports",
                "--no-warn-unused-ignores",
                "--allow-subclassing-any",
                "--no-warn-return-any",
                *STEP_MODULES,
            ],
            opt_level="2",
            group_name=STEP.GROUP,
            target_dir=str(HERE / "build" / "mypyc"),
        )
    except (Exception, SystemExit) as exc:  # a type error, a mypyc limit: Python runs instead
        why = (
            f"mypyc exited with {exc.code}; its errors are above"
            if isinstance(exc, SystemExit)
            else exc
        )
        print(f"mirrorcraft: the compiled step was not built ({why})", file=sys.stderr)
        return []
    finally:
        os.chdir(cwd)
    for ext in extensions:
        ext.optional = True
        ext.sources = [s if os.path.isabs(s) else str(SRC / s) for s in ext.sources]
        ext.include_dirs = [d if os.path.isabs(d) else str(SRC / d) for d in ext.include_dirs]
    sources = {
        m: hashlib.sha256((SRC / p).read_bytes()).hexdigest()
        for m, p in zip(STEP.MODULES, STEP_MODULES, strict=True)
    }
    manifest = {"group": f"{STEP.GROUP}__mypyc", "modules": sources}
    STEP_MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return extensions


setup(
    ext_modules=[
        Extension(
            "mirrorcraft.agents._unit_costs",
            ["src/mirrorcraft/agents/_unit_costs.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "mirrorcraft.world._census",
            ["src/mirrorcraft/world/_census.c", "src/mirrorcraft/world/_line_approach.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        *_step_extensions(),
    ]
)
