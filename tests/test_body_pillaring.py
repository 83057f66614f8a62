"""A way that rises straight up is climbed as a player climbs it (simulator version 4): one
disposable block placed under the feet a level (pillaring), taken from the inventory; with
too few blocks, the climb out of the ground is a staircase (one block sideways a level), and
a way that can only be climbed straight up fails with ``missing_item``."""

from __future__ import annotations

from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.body.paths import Approach, Blocked, _surface_approach, plan_approach
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.world.index import Pos
from mirrorcraft.world.registry import load_world
from mirrorcraft.world.state import WorldState
from tests.simtools import act, episode


def _everything(_name: str) -> bool:
    return True


def _shaft(state: WorldState, depth: int) -> tuple[Pos, int]:
    """An open shaft of air ``depth`` blocks deep under the surface at (60, 60); its floor
    (the body's feet) and the surface height there."""
    x, z = 60, 60
    top = state.surface_y(x, z)
    for y in range(top - depth, top + 1):
        state.set_block((x, y, z), "air")
    state.set_block((x, top - depth - 1, z), "stone")
    return (x, top - depth, z), top


def test_climbing_out_of_a_shaft_pillars_one_block_a_level() -> None:
    state = WorldState.fresh(load_world("plains-1"))
    start, top = _shaft(state, 10)
    target = (start[0] + 20, state.surface_y(start[0] + 20, start[2]) + 1, start[2])
    plan = _surface_approach(state, start, target, 4.0, _everything, 100, 64)
    assert isinstance(plan, Approach)
    x, _y, z = start
    # Out of the shaft: as high as the lowest ground beside it (a jump climbs the last block).
    out = min(state.surface_y(x + dx, z + dz) for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1)))
    assert top - 1 <= out <= top + 1
    cells = [c for _k, c in plan.pillars]
    # A block under the feet at every level from the floor up (the shaft was air, so
    # nothing is dug on the way up: every block is placed before any dig).
    assert cells == [(x, y, z) for y in range(start[1], out)]
    assert all(k == 0 for k, _c in plan.pillars)
    # With fewer blocks than levels: a staircase, which digs sideways and places nothing.
    stair = _surface_approach(state, start, target, 4.0, _everything, 100, 5)
    assert isinstance(stair, Approach) and not stair.pillars
    assert len(stair.digs) > 10
    assert {c[0] for c in stair.digs} - {x}  # it leaves the column
    assert max(c[1] for c in stair.digs) >= out


def _sealed_shaft() -> tuple[WorldState, Pos, Pos]:
    """A 9-block shaft of air in obsidian deep underground, an emerald ore at its top."""
    state = WorldState.fresh(load_world("plains-1"))
    x, z = 50, 50
    y0 = state.surface_y(x, z) - 30
    for cx in range(x - 2, x + 3):
        for cz in range(z - 2, z + 3):
            for cy in range(y0 - 1, y0 + 12):
                state.set_block((cx, cy, cz), "obsidian")
    for cy in range(y0, y0 + 9):
        state.set_block((x, cy, z), "air")
    ore = (x, y0 + 9, z)
    state.set_block(ore, "emerald_ore")
    return state, (x, y0, z), ore


def _in_the_shaft(inventory: dict[str, int]) -> tuple[SimEpisode, Pos, Pos]:
    """An episode whose body stands at the bottom of ``_sealed_shaft`` (built into its world)."""
    ep = episode("plains-1", inventory=inventory)
    fresh, start, ore = _sealed_shaft()
    for x in range(start[0] - 2, start[0] + 3):
        for z in range(start[2] - 2, start[2] + 3):
            for y in range(start[1] - 1, start[1] + 12):
                ep.body.state.set_block((x, y, z), fresh.block((x, y, z)))
    ep.body.pos = start
    return ep, start, ore


def test_a_way_only_climbed_straight_up_needs_the_blocks() -> None:
    state, start, ore = _sealed_shaft()

    def no_obsidian(name: str) -> bool:
        return name != "obsidian"

    plan = plan_approach(state, start, ore, 4.0, no_obsidian, 100, 10)
    assert isinstance(plan, Approach) and not plan.digs
    assert [c for _k, c in plan.pillars] == [(start[0], start[1] + i, start[2]) for i in range(5)]
    short = plan_approach(state, start, ore, 4.0, no_obsidian, 100, 4)
    assert isinstance(short, Blocked) and short.needs_blocks == 5


def test_the_walk_places_the_blocks_and_the_result_reports_them() -> None:
    ep, start, _ore = _in_the_shaft({"iron_pickaxe": 1, "dirt": 3, "cobblestone": 10})
    state = ep.body.state
    out = act(ep, "mine", block="emerald_ore", count=1)
    result = out.result
    assert result.ok, result.message
    assert result.details["pillared"] == {"cobblestone": 2, "dirt": 3}  # dirt first (body.yaml)
    assert "placed 5 blocks underfoot" in result.message
    # The skill's own use (a recipe's inputs) is not mixed with the climb's blocks.
    assert "dirt" not in result.consumed and "cobblestone" not in result.consumed
    assert result.inventory_delta["dirt"] == -3 and result.inventory_delta["cobblestone"] == -2
    assert [state.block((start[0], start[1] + i, start[2])) for i in range(5)] == [
        "dirt",
        "dirt",
        "dirt",
        "cobblestone",
        "cobblestone",
    ]
    assert ep.body.pos == (start[0], start[1] + 5, start[2])  # standing on the pillar


def test_without_the_blocks_the_skill_says_what_is_missing() -> None:
    ep, start, _ore = _in_the_shaft({"iron_pickaxe": 1, "dirt": 2})
    result = act(ep, "mine", block="emerald_ore", count=1).result
    assert not result.ok and result.reason == "missing_item"
    assert "pillaring" in result.message and result.details["needs_blocks"] == 5
    assert ep.body.inventory.total("dirt") == 2 and ep.body.pos == start


def test_the_way_to_a_station_never_pillars_with_what_the_call_will_use() -> None:
    """A craft's grid holds 3 cobblestone and the way to the crafting table climbs 5: the
    body pillars with its 5 dirt and keeps the cobblestone, and with only 2 spare blocks
    the way is not taken (the craft fails as a missing item, nothing spent)."""
    for dirt, ok in ((5, True), (2, False)):
        ep, _start, ore = _in_the_shaft({"iron_pickaxe": 1, "dirt": dirt, "cobblestone": 3})
        ep.body.state.set_block(ore, "crafting_table")
        grid = [["cobblestone", "cobblestone", "cobblestone"], [None, "stick", None]]
        grid.append([None, "stick", None])
        ep.body.inventory.add(ItemStack("stick", 2))
        result = act(ep, "craft_grid", station="crafting_table", grid=grid).result
        assert result.ok is ok, result.message
        if ok:
            assert result.details["pillared"] == {"dirt": 5}
            assert ep.body.inventory.total("stone_pickaxe") == 1
        else:
            assert result.reason == "missing_item" and "pillaring" in result.message
            assert ep.body.inventory.total("cobblestone") == 3
