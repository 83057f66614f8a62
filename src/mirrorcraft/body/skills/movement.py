"""explore, ascend and wait: finding targets, getting back to the surface, passing time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mirrorcraft.body import results as r
from mirrorcraft.body.body import Body
from mirrorcraft.body.paths import Approach, Blocked, settle
from mirrorcraft.body.results import ActionResult, failure
from mirrorcraft.body.skills.entities import entity_types, nearest_mobs
from mirrorcraft.body.skills.mining import blocked_result, stopped_result, with_produced
from mirrorcraft.world.index import Pos


def _region(body: Body, pos: Pos) -> tuple[int, int]:
    size = body.config.region_size
    return (pos[0] // size, pos[2] // size)


def _find(body: Body, target: str, names: list[str] | None) -> tuple[Pos, float] | None:
    if names is not None:
        hits = body.state.nearest(
            names, body.pos, body.config.explore_radius, k=1, horizontal_only=True
        )
        return (hits[0].pos, hits[0].distance) if hits else None
    mobs = nearest_mobs(body, target, body.config.explore_radius)
    return (mobs[0][1].pos, mobs[0][0] ** 0.5) if mobs else None


def _next_region(body: Body) -> tuple[int, int] | None:
    size = body.config.region_size
    per_side = max(body.state.size // size, 1)
    here = _region(body, body.pos)
    todo = [
        (rx, rz)
        for rx in range(per_side)
        for rz in range(per_side)
        if (rx, rz) not in body.state.explored_regions
    ]
    if not todo:
        return None
    return min(todo, key=lambda rg: ((rg[0] - here[0]) ** 2 + (rg[1] - here[1]) ** 2, rg))


def explore(body: Body, args: Mapping[str, Any]) -> ActionResult:
    target = args["target"]
    names = body.block_names(target)
    if names is None and target not in entity_types(body):
        return failure(
            "explore",
            args,
            r.NOT_SEARCHABLE,
            f"explore looks for a block or living-entity id; {target!r} is neither",
        )
    body.state.explored_regions.add(_region(body, body.pos))
    start = body.pos
    hops = 0
    found = _find(body, target, names)
    if found is None and _next_region(body) is None:
        # Every region has been visited: start a new sweep from here, so exploring never
        # leaves the body stranded where nothing it needs is in reach.
        body.state.explored_regions = {_region(body, body.pos)}
    while found is None and hops < body.config.explore_hops:
        region = _next_region(body)
        if region is None:
            break
        size = body.config.region_size
        cx = min(region[0] * size + size // 2, body.state.size - 1)
        cz = min(region[1] * size + size // 2, body.state.size - 1)
        body.move_to(settle(body.state, (cx, body.state.surface_y(cx, cz) + 1, cz)))
        body.state.explored_regions.add(region)
        hops += 1
        found = _find(body, target, names)
    if found is None:
        moved = " after moving to new regions" if body.pos != start else ""
        left = _next_region(body) is None
        note = "; every region has now been visited" if left else ""
        return failure(
            "explore",
            args,
            r.NOT_FOUND,
            f"no {target} found{moved}{note}",
            regions_visited=hops,
            all_regions_visited=left,
        )
    pos, distance = found
    if names is None:
        plan: Approach | Blocked = body.approach(pos, reach=2)
    else:
        plan = body.approach(pos)
    if isinstance(plan, Blocked):
        return blocked_result("explore", args, target, plan)
    walked = body.walk(plan, sub="explore")
    gained = body.gain(walked.drops)
    if walked.stopped is not None:
        cut = stopped_result(body, "explore", args, target, walked.stopped)
        details = {**cut.details, "found": True, "distance": round(distance, 1)}
        return with_produced(
            replace(
                cut,
                message=f"found {target} {distance:.0f} blocks away; {cut.message}",
                details=details,
            ),
            gained,
        )
    return ActionResult(
        "explore",
        args,
        True,
        "",
        f"found {target} {distance:.0f} blocks away and moved close",
        produced=gained,
        details={"found": True, "distance": round(distance, 1), "regions_visited": hops},
    )


def ascend(body: Body, args: Mapping[str, Any]) -> ActionResult:
    height = args["height"]
    x, y, z = body.pos
    state = body.state
    if height == 0:
        # The ground level here: the terrain as generated, or higher if something was built.
        surface = max(state.surface_y(x, z), int(state.loaded.world.heightmap[x, z]))
        if surface < y:
            return failure("ascend", args, r.NO_EFFECT, "already standing at the surface")
        rise = surface + 1 - y
        direction = 1 if x + rise < state.size else -1
        top = (min(max(x + direction * rise, 0), state.size - 1), surface + 1, z)
        top = (top[0], max(state.surface_y(top[0], z) + 1, top[1]), z)
        plan = body.approach(top, reach=0)
        if isinstance(plan, Blocked):
            return blocked_result("ascend", args, "the surface", plan)
        walked = body.walk(plan, sub="ascend")
        gained = body.gain(walked.drops)
        if walked.stopped is not None:
            return with_produced(
                stopped_result(body, "ascend", args, "the surface", walked.stopped), gained
            )
        # How it got there: pillaring, if any, is added to the message by the body.
        dug = f", digging {body.dug} blocks" if body.dug else ""
        return ActionResult(
            "ascend",
            args,
            True,
            "",
            f"climbed {body.pos[1] - y} blocks up to the surface{dug}",
            produced=gained,
            details={"climbed": body.pos[1] - y},
        )
    owned = [b for b in body.config.disposable_blocks if body.inventory.total(b) > 0]
    available = sum(body.inventory.total(b) for b in owned)
    if available < height:
        return failure(
            "ascend",
            args,
            r.MISSING_ITEM,
            f"pillaring {height} blocks needs {height} disposable blocks; {available} owned",
        )
    head_cells = [(x, y + 2 + i, z) for i in range(height)]
    for cell in head_cells:
        if (
            state.in_bounds(cell)
            and state.block_id(cell) not in state.passable_ids
            and not body.can_clear(state.block(cell))
        ):
            return failure(
                "ascend",
                args,
                r.NO_SPOT,
                f"{state.block(cell)} above cannot be cleared with owned tools",
            )
    if y + height + 2 > state.max_y:
        return failure("ascend", args, r.NO_SPOT, "too close to the build limit")
    drops = []
    for i, cell in enumerate(head_cells):
        if state.in_bounds(cell) and state.block_id(cell) not in state.passable_ids:
            drops.extend(body.break_block(cell, sub=f"ascend{i}", needed=False))
    consumed: dict[str, int] = {}
    for i in range(height):
        block = next(b for b in owned if body.inventory.total(b) > 0)
        body.spend(block, 1)
        consumed[block] = consumed.get(block, 0) + 1
        state.place_block((x, y + i, z), block)
    body.clock += height * body.config.timing.pillar_ticks
    body.pos = (x, y + height, z)
    gained = body.gain(drops)
    return ActionResult(
        "ascend",
        args,
        True,
        "",
        f"pillared up {height} blocks",
        produced=gained,
        consumed=consumed,
        details={"climbed": height},
    )


def wait(body: Body, args: Mapping[str, Any]) -> ActionResult:
    """Let ticks pass. Time of day is fixed, but a lit furnace keeps burning its fuel.

    As in the game, a furnace, blast furnace or smoker that still has burn time from fuel
    it took in burns it down tick by tick whether or not anything is cooking (every call
    takes game time, and a wait only this), so fuel left over from an earlier smelt is gone
    after long enough.
    """
    ticks = args["ticks"]
    stations = body.state.stations.values()
    burning = [s for s in stations if s.burn_now(body.clock) > 0]
    body.clock += ticks
    if not burning:
        message = f"waited {ticks} ticks; time of day is fixed, so nothing changed"
    else:
        out = sum(1 for s in burning if s.burn_now(body.clock) == 0)
        message = f"waited {ticks} ticks; time of day is fixed; lit furnaces kept burning fuel"
        if out:
            message += f" ({out} burned out)"
    return ActionResult("wait", args, True, "", message, details={"ticks": ticks})
