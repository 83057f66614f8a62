"""The compiled core (planner unit costs, nearby-block census) against the Python reference.

Both C modules are optional at install time; where they are built they must give exactly
what the Python code gives: the same unit-cost floats at every decision of recorded planner
episodes, the same census after random digging and placing, and byte-identical results for
a grid run with ``MIRRORCRAFT_PURE_PYTHON=1`` and without it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from mirrorcraft.agents import plan_native
from mirrorcraft.agents import planner as planner_mod
from mirrorcraft.world import census_native
from mirrorcraft.world.placed import PlacedBlocks
from tests.perf_reference import FIXTURES, planner_episodes

ROOT = Path(__file__).resolve().parents[1]
needs_core = pytest.mark.skipif(
    not (plan_native.ENABLED and census_native.ENABLED),
    reason="the compiled core is not built here or MIRRORCRAFT_PURE_PYTHON is set",
)


def test_the_core_is_built_where_a_compiler_is() -> None:
    """The extensions are optional, so a failed build is silent at install time: here it
    is not (CI has a compiler, so a broken C file fails this test)."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the Python reference runs")
    assert plan_native._core is not None, "mirrorcraft.agents._unit_costs was not built"
    assert census_native._core is not None, "mirrorcraft.world._census was not built"


@needs_core
@pytest.mark.parametrize("agent", ["vanilla-planner", "adaptive-planner", "oracle"])
def test_unit_costs_match_the_reference_at_every_decision(
    agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.perf_reference import play_planner

    reference = planner_mod.Planner._unit_costs
    compared: list[int] = [0]

    def both(self: Any, relevant: list[str], uses: Any) -> None:
        monkeypatch.setattr(plan_native, "ENABLED", False)
        reference(self, relevant, uses)
        expected = dict(self.unit)
        # A relevance's first use runs the reference (see plan_native.encoded): ask again.
        got = plan_native.unit_costs(self, relevant) or plan_native.unit_costs(self, relevant)
        assert got is not None and list(got) == list(expected)
        differing = {k: (got[k], v) for k, v in expected.items() if got[k] != v}
        assert not differing, f"compiled != reference: {differing}"
        compared[0] += 1

    monkeypatch.setattr(planner_mod.Planner, "_unit_costs", both)
    for episode in planner_episodes():
        if episode[0] == agent:
            play_planner(*episode)
    assert compared[0] > 300  # the 21 episodes make hundreds of decisions
    # The table's arrays grew a piece at a time: they equal the lists read whole.
    table = plan_native._TABLE
    lists = [*(table.cols[k] for k in table.COLUMNS), table.base]
    lists += [*(table.cols[k] for k in table.LISTS), table.station_item]
    for array, values in zip(table.arrays(), lists, strict=True):
        assert array.tolist() == (list(values) or [0])


@needs_core
def test_a_way_used_by_an_item_that_is_not_relevant_is_an_error_not_a_crash() -> None:
    """The C code trusts the encoded numbers; the one thing a caller could get wrong (a use
    whose user has no unit cost) is checked there and raised, not read out of bounds."""
    way = (2, 0.25, "stone", "block")  # SOURCE: a quarter action, mined by hand
    compiled = ({"cobblestone": (way,)}, {"cobblestone": [("gravel", way, None, 0)]})
    planner = SimpleNamespace(
        b=SimpleNamespace(
            harvest={"stone": frozenset({"hand"})}, rules=SimpleNamespace(fuels={}), root=None
        ),
        _compiled=compiled,
        inv={},
        facilities=set(),
        fuel_ticks=0,
        explore_costs=lambda wanted, out: out.fill(0.0),
    )
    assert plan_native.unit_costs(planner, ["cobblestone"]) is None  # first use: the reference
    with pytest.raises(ValueError, match="not relevant"):
        plan_native.unit_costs(planner, ["cobblestone"])


def _census_cases(world_id: str, cases: int, seed: int) -> tuple[int, int]:
    from mirrorcraft.world.registry import load_world
    from mirrorcraft.world.state import WorldState

    rng = random.Random(seed)
    loaded = load_world(world_id)
    state = WorldState.fresh(loaded)
    index = state.index
    ids = sorted(b for b in index.counts if b != 0)
    palette = loaded.world.palette
    extra = [palette.ids[n] for n in ("crafting_table", "furnace", "diamond_ore")]
    sx, sz, sy = state.grid.shape
    checked = differing = 0
    for _ in range(cases):
        for _ in range(30):  # dig and place anywhere, ids the world never had included
            p = (rng.randrange(sx), rng.randrange(sy) + state.min_y, rng.randrange(sz))
            state.set_block(p, palette.names[rng.choice([0, 0, *ids, *extra])])
        pos = (rng.randrange(-4, sx + 4), rng.randrange(sy) + state.min_y, rng.randrange(sz))
        radius = rng.choice([32, 32, 12.5, 3, 0, 48])
        want = rng.sample(ids, rng.randrange(1, len(ids))) + rng.sample(extra, 2)
        got = index.nearest_each(state.grid, state.placed, want, pos, radius)
        expected = index._nearest_each_py(state.grid, state.placed, want, pos, radius)
        checked += 1
        differing += got != expected
    return checked, differing


@needs_core
@pytest.mark.parametrize("world_id", ["plains-1", "jungle-2", "snowy_plains-1"])
def test_census_matches_the_reference_after_random_digging_and_placing(world_id: str) -> None:
    checked, differing = _census_cases(world_id, 120, seed=3)
    assert checked == 120 and differing == 0


def _brute_nearest(
    state: Any, ids: list[int], pos: tuple[int, int, int], radius: float, k: int, horiz: bool
) -> list[tuple[int, tuple[int, int, int]]]:
    """The k nearest by reading the whole grid and sorting by (distance, y, x, z)."""
    xs, zs, ys = np.nonzero(np.isin(state.grid, np.array(sorted(ids), dtype=np.uint16)))
    dx, dy, dz = xs - pos[0], ys + state.min_y - pos[1], zs - pos[2]
    h = dx * dx + dz * dz
    d = h + dy * dy
    ok = (h if horiz else d) <= int(radius * radius)
    rows = sorted(
        zip(
            d[ok].tolist(),
            (ys[ok] + state.min_y).tolist(),
            xs[ok].tolist(),
            zs[ok].tolist(),
            strict=True,
        )
    )[:k]
    return [(d2, (x, y, z)) for d2, y, x, z in rows]


def _nearest_cases(world_id: str, cases: int, seed: int) -> tuple[int, int, int]:
    """Random k-nearest searches after random digging and placing: (cases, compiled !=
    reference, reference != the whole grid sorted)."""
    from mirrorcraft.world.registry import load_world
    from mirrorcraft.world.state import WorldState

    rng = random.Random(seed)
    state = WorldState.fresh(load_world(world_id))
    index = state.index
    palette = state.loaded.world.palette
    ids = sorted(b for b in index.counts if b != 0)
    ids += [palette.ids[n] for n in ("crafting_table", "furnace", "diamond_ore")]
    sx, sz, sy = state.grid.shape
    compiled_differs = reference_differs = 0
    for _ in range(cases):
        for _ in range(30):
            p = (rng.randrange(sx), rng.randrange(sy) + state.min_y, rng.randrange(sz))
            state.set_block(p, palette.names[rng.choice([0, 0, *ids])])
        if rng.random() < 0.5:  # on the ground, or anywhere (underground: ties everywhere)
            x, z = rng.randrange(sx), rng.randrange(sz)
            pos = (x, state.surface_y(x, z) + rng.choice([1, 0, -3]), z)
        else:
            pos = (rng.randrange(-4, sx + 4), rng.randrange(sy) + state.min_y, rng.randrange(sz))
        radius = rng.choice([32, 32, 12.5, 3, 0, 48, 64])
        want = rng.sample(ids, rng.randrange(1, 4))
        k = rng.choice([1, 3, 4, 8, 8, 20, 64])
        horiz = rng.random() < 0.3
        got = index.nearest(state.grid, state.placed, want, pos, radius, k, horiz)
        expected = index._nearest_py(state.grid, state.placed, want, pos, radius, k, horiz)
        compiled_differs += got != expected
        brute = _brute_nearest(state, want, pos, radius, k, horiz)
        reference_differs += [(h.d2, h.pos) for h in expected] != brute
    return cases, compiled_differs, reference_differs


@needs_core
@pytest.mark.parametrize("world_id", ["plains-1", "jungle-2"])
def test_k_nearest_matches_the_reference_and_the_whole_grid_sorted(world_id: str) -> None:
    """The compiled k-nearest search and the reference give the same hits, and both are
    the k first of every block sorted by (distance, y, x, z): equally near blocks never
    depend on how a search (or numpy's partial sort) visits them."""
    assert _nearest_cases(world_id, 60, seed=5) == (60, 0, 0)


@needs_core
def test_k_nearest_finds_placed_blocks_and_forgets_dug_ones() -> None:
    from mirrorcraft.world.registry import load_world
    from mirrorcraft.world.state import WorldState

    state = WorldState.fresh(load_world("plains-1"))
    y = state.surface_y(60, 60) + 1
    pos = (60, y, 60)
    table = "crafting_table"
    assert state.nearest([table], pos, 32, k=3) == []
    state.set_block((62, y, 60), table)
    state.set_block((60, y, 58), table)  # as near: y, then x, then z decides
    hits = state.nearest([table], pos, 32, k=3)
    assert [(h.d2, h.pos) for h in hits] == [(4, (60, y, 58)), (4, (62, y, 60))]
    state.set_block((60, y, 58), "air")
    assert [h.pos for h in state.nearest([table], pos, 32, k=3)] == [(62, y, 60)]
    stone = state.nearest(["stone"], pos, 32, k=8)
    state.set_block(stone[0].pos, "air")  # a dug generated block is gone from the search
    assert stone[0].pos not in [h.pos for h in state.nearest(["stone"], pos, 32, k=8)]


@needs_core
@pytest.mark.parametrize("world_id", ["plains-1", "taiga-2"])
def test_straight_line_matches_the_reference(world_id: str) -> None:
    """``_line_approach`` through the compiled core (a ``Clearable``) and in Python give
    the same way or the same block in the way, over random lines through dug and filled
    worlds, reaches, dig caps (negative ones too) and tool sets."""
    from mirrorcraft.body.paths import Clearable, _line_approach, _line_approach_py
    from mirrorcraft.world.registry import load_world
    from mirrorcraft.world.state import WorldState

    rng = random.Random(11)
    state = WorldState.fresh(load_world(world_id))
    names = state.loaded.world.palette.names
    ids = sorted(b for b in state.index.counts if b != 0)
    sx, sz, sy = state.grid.shape
    kinds = {"ways": 0, "blocked": 0, "too_far": 0}
    for case in range(400):
        for _ in range(20):
            p = (rng.randrange(sx), rng.randrange(sy) + state.min_y, rng.randrange(sz))
            state.set_block(p, names[rng.choice([0, 0, 0, *ids])])
        hard = frozenset(rng.sample(ids, rng.randrange(0, 4)))  # ids no owned tool clears

        def ask(name: str, hard: frozenset[int] = hard) -> bool:
            return state.loaded.world.palette.ids[name] not in hard

        def point() -> tuple[int, int, int]:
            x, z = rng.randrange(-2, sx + 2), rng.randrange(-2, sz + 2)
            top = state.surface_y(min(max(x, 0), sx - 1), min(max(z, 0), sz - 1))
            return (x, top + rng.randrange(-12, 4), z)

        start, target = point(), point()
        if case % 5 == 0:  # short lines, as most are
            target = tuple(v + rng.randrange(-6, 7) for v in start)  # type: ignore[assignment]
        reach = rng.choice([0, 1, 2, 4.5, 6])
        cap = rng.choice([-1, 0, 1, 3, 10, 1000])
        got = _line_approach(state, start, target, reach, Clearable(ask, len(names)), cap)
        want = _line_approach_py(state, start, target, reach, ask, cap)
        assert got == want, (case, start, target, reach, cap)
        kind = "ways" if not hasattr(want, "too_far") else "too_far" if want.too_far else "blocked"  # type: ignore[union-attr]
        kinds[kind] += 1
    assert min(kinds.values()) > 10, kinds  # every outcome was met
    # A table shorter than the palette is refused, not read past its end.
    x, z = sx // 2, sz // 2
    start, target = (x, state.surface_y(x, z) - 6, z), (x + 9, state.surface_y(x, z) - 6, z)
    with pytest.raises(ValueError, match="past the table"):
        _line_approach(state, start, target, 1, Clearable(lambda _n: True, 1), 100)


@needs_core
def test_census_sees_a_block_placed_far_from_every_generated_one() -> None:
    """A block of an id the nearby sections never held is found through the placed list
    (the section table is the generated world's)."""
    from mirrorcraft.world.registry import load_world
    from mirrorcraft.world.state import WorldState

    state = WorldState.fresh(load_world("plains-1"))
    pos = (60, state.surface_y(60, 60) + 1, 60)
    table = state.loaded.world.palette.ids["crafting_table"]
    assert table not in state.index.nearest_each(state.grid, state.placed, [table], pos, 32)
    state.set_block((62, pos[1], 60), "crafting_table")
    got = state.index.nearest_each(state.grid, state.placed, [table], pos, 32)
    assert got == {table: 4}
    state.set_block((62, pos[1], 60), "air")
    assert table not in state.index.nearest_each(state.grid, state.placed, [table], pos, 32)


@needs_core
def test_a_grid_the_core_cannot_read_falls_back_to_the_reference() -> None:
    from mirrorcraft.world.registry import load_world
    from mirrorcraft.world.state import WorldState

    state = WorldState.fresh(load_world("plains-1"))
    strided = np.asfortranarray(state.grid)
    bits = state.index.section_bits
    assert census_native.usable(bits, state.grid, 32)
    assert not census_native.usable(bits, strided, 32)
    assert not census_native.usable(bits, state.grid[:, :, :-1].copy(), 32)  # another shape
    assert not census_native.usable(bits, state.grid, 1000.0)  # a radius too large
    ids = sorted(b for b in state.index.counts if b != 0)
    pos = (30, state.surface_y(30, 30), 30)
    assert state.index.nearest_each(
        strided, PlacedBlocks(), ids, pos, 32
    ) == state.index._nearest_each_py(state.grid, PlacedBlocks(), ids, pos, 32)
    assert state.index.nearest(
        strided, PlacedBlocks(), ids, pos, 1000.0, 8
    ) == state.index._nearest_py(state.grid, PlacedBlocks(), ids, pos, 1000.0, 8)
    big_k = state.index.nearest(state.grid, PlacedBlocks(), ids, pos, 32, census_native.MAX_K + 1)
    assert big_k == state.index._nearest_py(
        state.grid, PlacedBlocks(), ids, pos, 32, census_native.MAX_K + 1
    )


def _python(code: str, pure: bool) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MIRRORCRAFT_PURE_PYTHON", None)
    if pure:
        env["MIRRORCRAFT_PURE_PYTHON"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_pure_python_switch_turns_both_off_and_gives_the_recorded_grid() -> None:
    """With MIRRORCRAFT_PURE_PYTHON=1 the references run, and the grid run through
    ``mirrorcraft run`` is byte for byte the recorded one (``test_perf_reference`` checks
    the same grid with the core)."""
    code = (
        "import json\n"
        "from mirrorcraft.agents import plan_native\n"
        "from mirrorcraft.world import census_native\n"
        "from mirrorcraft.native import core_summary\n"
        "from tests.perf_reference import grid_digests\n"
        "print(json.dumps([plan_native.ENABLED, census_native.ENABLED, core_summary()]))\n"
        "print(json.dumps(grid_digests()))\n"
    )
    lines = _python(code, pure=True).splitlines()
    flags, digests = lines[0], lines[-1]
    plan_on, census_on, name = json.loads(flags)
    assert (plan_on, census_on) == (False, False) and "Python reference" in name
    assert json.loads(digests) == json.loads((FIXTURES / "reference_grid.json").read_text())


def test_version_says_which_core_runs() -> None:
    env = {**os.environ}
    env.pop("MIRRORCRAFT_PURE_PYTHON", None)
    exe = [sys.executable, "-m", "mirrorcraft.cli", "--version"]
    plain = subprocess.run(exe, env=env, capture_output=True, text=True, timeout=60)
    pure = subprocess.run(
        exe, env={**env, "MIRRORCRAFT_PURE_PYTHON": "1"}, capture_output=True, text=True, timeout=60
    )
    assert plain.returncode == 0 and pure.returncode == 0
    assert plain.stdout.startswith("mirrorcraft ") and pure.stdout.startswith("mirrorcraft ")
    built = plan_native._core is not None and census_native._core is not None
    assert ("compiled core: on" in plain.stdout) == built
    assert "Python reference" in pure.stdout


def test_without_the_core_everything_runs_on_the_reference() -> None:
    """What an install without a C compiler gets: both modules missing. The version line
    says so, and a small grid still runs and gives the recorded results."""
    code = (
        "import sys, json\n"
        "sys.modules['mirrorcraft.agents._unit_costs'] = None  # as if never built\n"
        "sys.modules['mirrorcraft.world._census'] = None\n"
        "from mirrorcraft.agents import plan_native\n"
        "from mirrorcraft.world import census_native\n"
        "from mirrorcraft.native import core_summary\n"
        "from tests.perf_reference import grid_digests\n"
        "print(json.dumps([plan_native.BUILT, census_native.BUILT, core_summary()]))\n"
        "print(json.dumps(grid_digests()))\n"
    )
    lines = _python(code, pure=False).splitlines()
    plan_built, census_built, summary = json.loads(lines[0])
    assert (plan_built, census_built) == (False, False)
    assert summary.startswith("compiled core: not built") and "same results" in summary
    assert json.loads(lines[-1]) == json.loads((FIXTURES / "reference_grid.json").read_text())
