"""place and equip, and finding placed facilities."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mirrorcraft.body import results as r
from mirrorcraft.body.blockstate import is_two_high
from mirrorcraft.body.body import ARMOR_SLOTS, Body
from mirrorcraft.body.paths import Blocked
from mirrorcraft.body.results import ActionResult, failure
from mirrorcraft.body.skills.mining import blocked_result, stopped_result
from mirrorcraft.body.wear import copies
from mirrorcraft.world.index import Pos
from mirrorcraft.world.state import StationState

FURNACE_LIKE = frozenset({"furnace", "blast_furnace", "smoker"})
_NEIGHBOURS = ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))


def _spots() -> list[tuple[int, int, int]]:
    """Offsets within two blocks of the feet, nearest first (fixed order)."""
    cells = [
        (dx, dy, dz)
        for dx in range(-2, 3)
        for dy in range(-1, 3)
        for dz in range(-2, 3)
        if (dx, dz) != (0, 0) or dy not in (0, 1)
    ]
    return sorted(cells, key=lambda c: (c[0] ** 2 + c[1] ** 2 + c[2] ** 2, c[1] != 0, c))


_SPOTS = _spots()


def free_spot(body: Body, tall: bool = False) -> Pos | None:
    """An open cell near the body that a block can be placed in: it must touch a solid block.

    Spots with solid ground under them come first, as a player would choose. ``tall``:
    the block is two cells high, so the cell above the spot must be open too.
    """
    state = body.state
    x, y, z = body.pos
    passable = state.passable_ids
    water = state.loaded.world.palette.ids.get("water", -1)
    fallback: Pos | None = None
    body_cells = {(x, y, z), (x, y + 1, z)}
    for dx, dy, dz in _SPOTS:
        p = (x + dx, y + dy, z + dz)
        if not state.in_bounds(p):
            continue
        here = state.block_id(p)
        if here not in passable or here == water:
            continue
        if tall:
            up = (p[0], p[1] + 1, p[2])
            if (
                not state.in_bounds(up)
                or up in body_cells
                or state.block_id(up) not in passable
                or state.block_id(up) == water
            ):
                continue
        below = (p[0], p[1] - 1, p[2])
        if state.in_bounds(below) and state.block_id(below) not in passable:
            return p
        if fallback is None and any(
            state.in_bounds(n) and state.block_id(n) not in passable
            for n in ((p[0] + a, p[1] + b, p[2] + c) for a, b, c in _NEIGHBOURS)
        ):
            fallback = p
    return fallback


def place(body: Body, args: Mapping[str, Any]) -> ActionResult:
    block = args["block"]
    if not body.is_item(block):
        return failure("place", args, r.INVALID_ARGS, f"{block!r} is not a known item id")
    if body.inventory.total(block) < 1:
        return failure("place", args, r.MISSING_ITEM, f"no {block} in the inventory")
    if block not in body.rules.game.blocks or block not in body.state.loaded.world.palette.ids:
        return failure("place", args, r.NOT_PLACEABLE, f"{block} is not a block that can be placed")
    tall = is_two_high(body.rules.game.blocks.get(block))
    spot = free_spot(body, tall)
    gained: dict[str, int] = {}
    if spot is None and tall:
        return failure("place", args, r.NO_SPOT, f"no open spot two blocks high for {block}")
    if spot is None:
        # Clear one local obstruction to make room, as the body may within a call.
        spot = _clearable_spot(body)
        if spot is None:
            return failure(
                "place",
                args,
                r.NO_SPOT,
                "no open spot next to the body, and nothing nearby can be cleared",
            )
        gained = body.gain(body.break_block(spot, sub="place", needed=False))
    body.spend(block, 1)
    body.state.place_block(spot, block)
    if tall:  # the upper half goes in above, as the game places it
        body.state.place_block((spot[0], spot[1] + 1, spot[2]), block)
    if block in FURNACE_LIKE:
        body.state.stations[spot] = StationState(block)
    return ActionResult(
        "place",
        args,
        True,
        "",
        f"placed {block}",
        produced=gained,
        consumed={block: 1},
        details={"position": list(spot)},
    )


def _clearable_spot(body: Body) -> Pos | None:
    state = body.state
    x, y, z = body.pos
    for dx, dy, dz in _SPOTS:
        p = (x + dx, y + dy, z + dz)
        if (
            state.in_bounds(p)
            and state.block_id(p) not in state.passable_ids
            and body.can_clear(state.block(p))
        ):
            return p
    return None


def equip(body: Body, args: Mapping[str, Any]) -> ActionResult:
    item = args["item"]
    if not body.is_item(item):
        return failure("equip", args, r.INVALID_ARGS, f"{item!r} is not a known item id")
    keys = copies(body.inventory, item)
    if not keys:
        return failure("equip", args, r.MISSING_ITEM, f"no {item} in the inventory")
    if item in body.config.facilities:
        return failure("equip", args, r.NOT_EQUIPPABLE, f"{item} is a facility: use place")
    for suffix, slot in ARMOR_SLOTS.items():
        if item.endswith("_" + suffix):
            body.armor[slot] = keys[0]
            return ActionResult("equip", args, True, "", f"wearing {item}", details={"slot": slot})
    body.equip_key(keys[0])
    return ActionResult("equip", args, True, "", f"holding {item}", details={"slot": "hand"})


def find_station(
    body: Body, block: str, skill: str, args: Mapping[str, Any]
) -> tuple[Pos, ActionResult | None]:
    """Walk to the nearest placed ``block``; a failure result if there is none or it is walled off."""
    hits = body.state.nearest([block], body.pos, body.config.station_radius, k=3)
    if not hits:
        reason = r.NEEDS_TABLE if block == "crafting_table" else r.NEEDS_STATION
        return body.pos, failure(skill, args, reason, f"no placed {block} nearby")
    short: Blocked | None = None
    for hit in hits:
        plan = body.approach(hit.pos)
        if isinstance(plan, Blocked):
            if plan.needs_blocks and short is None:
                short = plan
            continue
        walked = body.walk(plan, sub=f"station{hit.pos}")
        body.gain(walked.drops)
        if walked.stopped is not None:
            cut = stopped_result(body, skill, args, f"the {block}", walked.stopped)
            if cut.reason == r.TARGET_UNREACHABLE:  # as the bridge names a station it cannot reach
                cut = replace(cut, reason=r.STATION_UNREACHABLE)
            return hit.pos, cut
        return hit.pos, None
    if short is not None:  # reachable only by pillaring, with too few blocks
        return hits[0].pos, blocked_result(skill, args, f"the {block}", short)
    return hits[0].pos, failure(
        skill,
        args,
        r.STATION_UNREACHABLE,
        f"the nearby {block} cannot be reached; try prepare_access",
    )
