"""Which code runs the hot loops: the compiled core or the Python reference.

The core is two optional C extensions built at install time (``setup.py``), and the
simulator's step compiled by mypyc from its own sources (``step_build.py``). The C
extensions are the planners' unit costs (``agents/plan_native.py``), and the nearby-block census with the
k-nearest block search (``world/census_native.py``). Each falls back to its Python reference when it was not
built, and ``MIRRORCRAFT_PURE_PYTHON=1`` makes both use the reference. Results are the
same either way; only the speed differs.
"""

from __future__ import annotations


def core_summary() -> str:
    """Two lines for ``mirrorcraft --version`` and the benchmarks: the C modules, the step."""
    from mirrorcraft import step_build

    return f"{_c_summary()}\n{step_build.summary()}"


def _c_summary() -> str:
    from mirrorcraft.agents import plan_native
    from mirrorcraft.world import census_native

    parts = {
        "planner costs": (plan_native.BUILT, plan_native.ENABLED),
        "census and block search": (census_native.BUILT, census_native.ENABLED),
    }
    if all(on for _built, on in parts.values()):
        return "compiled core: on (planner costs, census and block search)"
    if all(built for built, _on in parts.values()):
        return "compiled core: built, off (MIRRORCRAFT_PURE_PYTHON is set): Python reference"
    missing = ", ".join(name for name, (built, _on) in parts.items() if not built)
    return f"compiled core: not built ({missing}): Python reference, slower, same results"
