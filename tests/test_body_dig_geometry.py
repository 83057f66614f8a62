"""The straight way is dug as a player two blocks tall can move (simulator version 3): a
diagonal step passes beside one of the two blocks that meet at the corner, a step up needs
the headroom to jump, a step down walks into the new column at the old height before it
drops. Each case runs on the Python reference and, where it is built, the compiled core."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mirrorcraft.body.paths import Approach, Blocked, Clearable, _line_approach, _line_approach_py
from mirrorcraft.world import census_native
from mirrorcraft.world.index import Pos
from mirrorcraft.world.registry import load_world
from mirrorcraft.world.state import WorldState

Way = Callable[[WorldState, Pos, Pos, Callable[[str], bool]], Approach | Blocked]


def _python(
    state: WorldState, start: Pos, target: Pos, ask: Callable[[str], bool]
) -> Approach | Blocked:
    return _line_approach_py(state, start, target, 0, ask, 100)


def _compiled(
    state: WorldState, start: Pos, target: Pos, ask: Callable[[str], bool]
) -> Approach | Blocked:
    names = state.loaded.world.palette.names
    return _line_approach(state, start, target, 0, Clearable(ask, len(names)), 100)


WAYS = [
    pytest.param(_python, id="python"),
    pytest.param(
        _compiled,
        id="compiled",
        marks=pytest.mark.skipif(
            not census_native.ENABLED, reason="the compiled core is not built"
        ),
    ),
]


def _room() -> tuple[WorldState, Pos]:
    """A world with a 9x6x9 room of air carved deep underground; returns the room's floor
    corner (feet height)."""
    state = WorldState.fresh(load_world("plains-1"))
    x0, z0 = 40, 40
    y0 = state.surface_y(x0, z0) - 30
    for x in range(x0 - 1, x0 + 10):
        for z in range(z0 - 1, z0 + 10):
            for y in range(y0 - 1, y0 + 7):
                inside = x0 <= x < x0 + 9 and z0 <= z < z0 + 9 and y0 <= y < y0 + 6
                state.set_block((x, y, z), "air" if inside else "stone")
    return state, (x0, y0, z0)


def _everything(_name: str) -> bool:
    return True


@pytest.mark.parametrize("way", WAYS)
def test_a_diagonal_step_digs_one_side_of_the_corner(way: Way) -> None:
    state, (x, y, z) = _room()
    start, target = (x + 1, y, z + 1), (x + 3, y, z + 3)
    for c in ((x + 2, y, z + 1), (x + 2, y + 1, z + 1), (x + 1, y, z + 2), (x + 1, y + 1, z + 2)):
        state.set_block(c, "stone")  # both sides of the corner, two high
    plan = way(state, start, target, _everything)
    assert isinstance(plan, Approach)
    # Tie: the x side, both of its cells; nothing else is in the way.
    assert plan.digs == ((x + 2, y, z + 1), (x + 2, y + 1, z + 1))
    state.set_block(
        (x + 2, y + 1, z + 1), "obsidian"
    )  # the x side now needs a block no tool clears
    plan = way(state, start, target, lambda name: name != "obsidian")
    assert isinstance(plan, Approach)
    assert plan.digs == ((x + 1, y, z + 2), (x + 1, y + 1, z + 2))  # the other side
    state.set_block((x + 2, y + 1, z + 1), "stone")
    state.set_block((x + 1, y, z + 2), "air")  # now one block on the z side against two on x
    plan = way(state, start, target, _everything)
    assert isinstance(plan, Approach) and plan.digs == ((x + 1, y + 1, z + 2),)


@pytest.mark.parametrize("way", WAYS)
def test_a_step_up_needs_headroom_to_jump(way: Way) -> None:
    state, (x, y, z) = _room()
    start, target = (x + 1, y, z + 4), (x + 5, y + 4, z + 4)  # a staircase up
    ceiling = y + 2
    for cx in range(x, x + 9):  # a ceiling right above the head
        state.set_block((cx, ceiling, z + 4), "stone")
    plan = way(state, start, target, _everything)
    assert isinstance(plan, Approach)
    # Each step up digs the block above the head where it stands, then the cells it moves into.
    assert (x + 1, y + 2, z + 4) in plan.digs
    assert plan.digs[0] == (x + 1, y + 2, z + 4)


@pytest.mark.parametrize("way", WAYS)
def test_a_step_down_walks_in_at_the_old_height_first(way: Way) -> None:
    state, (x, y, z) = _room()
    start, target = (x + 1, y + 3, z + 4), (x + 5, y, z + 4)
    for cx in range(x, x + 9):  # a floor under the start, then a wall across the way down
        for cy in range(y, y + 3):
            state.set_block((cx, cy, z + 4), "stone")
    state.set_block((x + 2, y + 4, z + 4), "stone")  # where the head passes at the old height
    plan = way(state, start, target, _everything)
    assert isinstance(plan, Approach)
    # Into x+2 at the old height (feet y+3, head y+4), then down into y+2.
    assert plan.digs[:2] == ((x + 2, y + 4, z + 4), (x + 2, y + 2, z + 4))


@pytest.mark.parametrize("way", WAYS)
def test_a_straight_flat_way_digs_the_two_high_tunnel_only(way: Way) -> None:
    state, (x, y, z) = _room()
    start, target = (x, y, z + 4), (x + 8, y, z + 4)
    for cx in range(x + 1, x + 8):
        for cy in (y, y + 1):
            state.set_block((cx, cy, z + 4), "stone")
    plan = way(state, start, target, _everything)
    assert isinstance(plan, Approach)
    assert len(plan.digs) == 14 and all(c[1] in (y, y + 1) for c in plan.digs)
