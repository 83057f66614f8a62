"""The compiled core's C extensions (everything else is in pyproject.toml).

Both are optional: without a C compiler ``pip install`` still succeeds and the Python
reference code runs instead, slower, with the same results (``docs/performance.md``,
"The compiled core"; ``mirrorcraft --version`` says which runs).
"""

from setuptools import Extension, setup

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
            ["src/mirrorcraft/world/_census.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
    ]
)
