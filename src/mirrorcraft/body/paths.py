"""Straight-line approach paths through the voxel grid, and what must be dug on them."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mirrorcraft.world import census_native
from mirrorcraft.world.index import Pos
from mirrorcraft.world.state import WorldState


def line_cells(a: Pos, b: Pos) -> list[Pos]:
    """Cells visited walking from ``a`` to ``b`` in unit steps (3-D Bresenham), both included."""
    x, y, z = a
    dx, dy, dz = abs(b[0] - x), abs(b[1] - y), abs(b[2] - z)
    sx = 1 if b[0] > x else -1
    sy = 1 if b[1] > y else -1
    sz = 1 if b[2] > z else -1
    cells = [(x, y, z)]
    n = max(dx, dy, dz)
    ex, ey, ez = n // 2, n // 2, n // 2
    for _ in range(n):
        ex -= dx
        ey -= dy
        ez -= dz
        if ex < 0:
            ex += n
            x += sx
        if ey < 0:
            ey += n
            y += sy
        if ez < 0:
            ez += n
            z += sz
        cells.append((x, y, z))
    return cells


def dist2(a: Pos, b: Pos) -> int:
    return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2


@dataclass(frozen=True)
class Approach:
    stand: Pos
    """Where the body ends up (feet), before gravity."""
    digs: tuple[Pos, ...]
    """Blocks to break on the way, in order."""
    froms: tuple[Pos, ...] = ()
    """Where the body stands (feet) when it breaks each of ``digs``."""
    pillars: tuple[tuple[int, Pos], ...] = ()
    """Where the way climbs straight up, a block is placed under the feet (pillaring): each
    cell to fill, with how many of ``digs`` are dug before it is placed."""


@dataclass(frozen=True)
class Blocked:
    at: Pos
    block: str
    too_far: bool = False
    needs_blocks: int = 0
    """A way exists only by climbing straight up this many blocks, and the body owns fewer
    disposable blocks to pillar with (``at`` and ``block``: the body's feet and block)."""


class Clearable:
    """A ``can_clear`` that also keeps its answers by block id (-1: not asked yet), for the
    compiled straight line. It must answer for one fixed set of owned tools.

    The body keeps its ``Clearable``, so what it asks must not hold the body (that cycle
    would keep the episode's world grid alive until the garbage collector runs): the
    body passes a function of the rules and its owned tools. Answers are kept by name
    too, so it is called once per block name."""

    __slots__ = ("_ask", "_known", "table")

    def __init__(self, ask: Callable[[str], bool], ids: int):
        self._ask = ask
        self.table = np.full(ids, -1, dtype=np.int8)
        """By block id of the world's palette (``ids`` of them)."""
        self._known: dict[str, bool] = {}

    def __call__(self, name: str) -> bool:
        known = self._known.get(name)
        if known is None:
            known = self._known[name] = self._ask(name)
        return known


def _line_approach(
    state: WorldState,
    start: Pos,
    target: Pos,
    reach: float,
    can_clear: Callable[[str], bool],
    max_digs: int,
) -> Approach | Blocked:
    """Walk the straight line until within reach; the rest of the line must be clear to see.

    In C (``census_native.line_approach``) when the compiled core is built and
    ``can_clear`` is a ``Clearable``; ``_line_approach_py`` is the reference."""
    if (
        isinstance(can_clear, Clearable)
        and census_native.ENABLED
        and state.grid.dtype == np.uint16
        and state.grid.flags.c_contiguous
        and state.grid.shape[0] == state.grid.shape[1] == state.size
    ):
        return _line_approach_native(state, start, target, reach, can_clear, max_digs)
    return _line_approach_py(state, start, target, reach, can_clear, max_digs)


def _line_approach_native(
    state: WorldState, start: Pos, target: Pos, reach: float, clear: Clearable, max_digs: int
) -> Approach | Blocked:
    names = state.loaded.world.palette.names
    passable = census_native.passable_table(state.passable_ids)
    while True:
        status, stand, digs, froms, at, bid = census_native.line_approach(
            state.grid, state.min_y, start, target, reach * reach, passable, clear.table, max_digs
        )
        if status != 3:
            break
        clear.table[bid] = 1 if clear(names[bid]) else 0  # asked once, then the walk again
    if status == 0:
        return Approach(stand, digs, froms)
    return Blocked(at, names[bid], too_far=status == 2)


def _line_approach_py(
    state: WorldState,
    start: Pos,
    target: Pos,
    reach: float,
    can_clear: Callable[[str], bool],
    max_digs: int,
) -> Approach | Blocked:
    """``_line_approach`` in Python: the reference."""
    reach2 = reach * reach
    passable = state.passable_ids
    names = state.loaded.world.palette.names
    grid, size, min_y, max_y = state.grid, state.size, state.min_y, state.max_y
    clearable: dict[int, bool] = {}
    digs: list[Pos] = []
    froms: list[Pos] = []
    seen: set[Pos] = set()
    stand = start
    tx, ty, tz = target
    walking = True

    def fresh(c: Pos) -> bool:
        """Still to look at: not the target (never dug here), not checked, inside the world."""
        cx, cy, cz = c
        return (
            c != target
            and c not in seen
            and 0 <= cx < size
            and 0 <= cz < size
            and min_y <= cy < max_y
        )

    def cost(cells: tuple[Pos, Pos]) -> int:
        """Blocks a way through these cells digs (a large number if one cannot be)."""
        n = 0
        for c in cells:
            if not fresh(c):
                continue
            bid: int = grid.item(c[0], c[2], c[1] - min_y)
            if bid in passable:
                continue
            ok = clearable.get(bid)
            if ok is None:
                ok = clearable[bid] = can_clear(names[bid])
            n += 1 if ok else UNCLEARABLE
        return n

    for cell in line_cells(start, target)[1:]:
        if cell == target:
            break
        x, y, z = cell
        if walking:  # once in reach the body stops walking: it stays in reach
            walking = (stand[0] - tx) ** 2 + (stand[1] - ty) ** 2 + (stand[2] - tz) ** 2 > reach2
        checks: list[Pos]
        if not walking:
            checks = [cell]  # the rest of the line must be clear to see the target
        else:
            px, py, pz = stand
            if x == px and z == pz:  # straight up or down: the column itself
                checks = [cell, (x, y + 1, z)]
            else:
                # A player's step (body two blocks tall): up, it jumps first (headroom above
                # its head), then moves at the new height; down, it walks into the new
                # column at its old height, then drops; a diagonal step passes beside one
                # of the two blocks that meet at the corner, the one that digs less.
                h = py + 1 if y > py else py
                checks = [(px, py + 2, pz)] if y > py else []
                if x != px and z != pz:
                    a, b = (x, h, pz), (px, h, z)
                    side = a if cost((a, (x, h + 1, pz))) <= cost((b, (px, h + 1, z))) else b
                    checks += [side, (side[0], h + 1, side[2])]
                checks += [(x, h, z), (x, h + 1, z)]
                if y < py:
                    checks.append(cell)
        for c in checks:
            if not fresh(c):
                continue
            seen.add(c)
            bid = grid.item(c[0], c[2], c[1] - min_y)
            if bid in passable:
                continue
            ok = clearable.get(bid)
            if ok is None:
                ok = clearable[bid] = can_clear(names[bid])
            if not ok:
                return Blocked(c, names[bid])
            digs.append(c)
            froms.append(stand)
            if len(digs) > max_digs:
                return Blocked(c, names[bid], too_far=True)
        if walking:
            stand = cell
    return Approach(stand, tuple(digs), tuple(froms))


UNCLEARABLE = 1_000
"""A side cell owned tools cannot clear, in a diagonal step's choice of side."""


Owned = int | Callable[[], int]
"""The disposable blocks a body owns: a count, or a function that counts them."""


def _count(blocks: Owned) -> int:
    return blocks if isinstance(blocks, int) else blocks()


def _line_pillars(
    state: WorldState, start: Pos, target: Pos, plan: Approach
) -> tuple[tuple[int, Pos], ...]:
    """The blocks a straight way places under the feet: one for every step that rises in
    the body's own column (a player cannot jump higher than one block without standing on
    something), each with the number of the way's digs dug before it (those dug from where
    the body stood until then)."""
    if plan.stand[1] <= start[1]:  # a straight line never rises after it falls
        return ()
    seq: list[Pos] = []
    for c in line_cells(start, target):
        seq.append(c)
        if c == plan.stand:
            break
    order = {c: i for i, c in enumerate(seq)}
    at = [order.get(f, 0) for f in plan.froms]  # stands along the line: never decreasing
    water = state.loaded.world.palette.ids.get("water", -1)
    out: list[tuple[int, Pos]] = []
    for i in range(1, len(seq)):
        p, c = seq[i - 1], seq[i]
        if c[0] == p[0] and c[2] == p[2] and c[1] > p[1] and state.block_id(p) != water:
            out.append((bisect_left(at, i), p))  # the digs made from before this step
    return tuple(out)


def _climb_out(
    state: WorldState,
    start: Pos,
    can_clear: Callable[[str], bool],
    max_digs: int,
    blocks: Owned,
) -> Approach | Blocked | None:
    """From ``start`` up to where the body can step out over the terrain: above the ground
    of its own column (digging up to the sky if underground), and as high as the lowest
    ground next to it less the one block a jump climbs (out of a pit or a shaft). Straight
    up its column, pillaring (one disposable block a level), or, with fewer than ``blocks``
    levels, up a staircase of one step a block sideways (as ``ascend`` with height 0 digs
    it). None if neither gets out. ``stand`` is where it steps out from."""
    x, y, z = start
    if not (0 <= x < state.size and 0 <= z < state.size):
        return Approach(start, ())
    top = state.surface_y(x, z)
    up: list[Pos] = []
    up_from: list[Pos] = []
    # The solid cells of the column between the body and the sky, read in one slice.
    lo, hi = max(y + 1, state.min_y), min(top + 2, state.max_y)
    if hi > lo:
        column = state.grid[x, z, lo - state.min_y : hi - state.min_y]
        names = state.loaded.world.palette.names
        ids = column.tolist()
        for i in np.flatnonzero(state.solid_lut[column]).tolist():
            cy = lo + i
            c = (x, cy, z)
            name = names[ids[i]]
            if not can_clear(name):
                return Blocked(c, name)
            up.append(c)
            up_from.append((x, max(y, cy - 2), z))
    ground = [
        state.surface_y(nx, nz)
        for nx, nz in ((x + 1, z), (x - 1, z), (x, z + 1), (x, z - 1))
        if 0 <= nx < state.size and 0 <= nz < state.size
    ]
    out_y = min(max(top + 1, min(ground, default=top + 1)), state.max_y - 1)
    if out_y <= y:
        return Approach(start, tuple(up), tuple(up_from))
    water = state.loaded.world.palette.ids.get("water", -1)
    heights = [f[1] for f in up_from]  # where it stands to dig each: never decreasing
    pillars: list[tuple[int, Pos]] = []
    for fy in range(max(y, state.min_y), out_y):
        if state.block_id((x, fy, z)) != water:  # the body swims up through water
            pillars.append((bisect_right(heights, fy), (x, fy, z)))
    if len(pillars) <= _count(blocks):
        return Approach((x, out_y, z), tuple(up), tuple(up_from), tuple(pillars))
    return _staircase(state, start, out_y, can_clear, max_digs)


def _staircase(
    state: WorldState, start: Pos, out_y: int, can_clear: Callable[[str], bool], max_digs: int
) -> Approach | None:
    """A staircase from ``start`` at 45 degrees along x (each step up is a jump beside the
    last, never a pillar) to the open air over the ground, at least ``out_y`` high."""
    x, y, z = start
    rise = out_y - y
    d = 1 if x + rise + 1 < state.size else -1
    for _ in range(4):  # where the ground is higher, the stairs go on up to it
        ex = x + d * rise
        if not 0 <= ex < state.size:
            return None
        need = state.surface_y(ex, z) + 1
        if need <= y + rise:
            break
        rise = need - y
    else:
        return None
    exit_ = (x + d * rise, y + rise, z)
    if not 0 <= exit_[0] < state.size or exit_[1] >= state.max_y:
        return None
    # A 45-degree line ends one step short of its target, which is never dug: aim one
    # step beyond the exit.
    beyond = (exit_[0] + d, exit_[1] + 1, z)
    stair = _line_approach(state, start, beyond, 0.0, can_clear, max_digs)
    if isinstance(stair, Blocked) or stair.stand != exit_:
        return None
    return stair


def _surface_approach(
    state: WorldState,
    start: Pos,
    target: Pos,
    reach: float,
    can_clear: Callable[[str], bool],
    max_digs: int,
    blocks: Owned = 0,
) -> Approach | Blocked | None:
    """Climb to the open sky if underground (``_climb_out``, with ``blocks`` disposable
    blocks to pillar with), walk over the terrain, then dig down to the target."""
    out = _climb_out(state, start, can_clear, max_digs, blocks)
    if not isinstance(out, Approach):
        return out
    up, up_from, pillars = out.digs, out.froms, out.pillars
    tx, _ty, tz = target
    above = (tx, state.surface_y(tx, tz) + 1, tz)
    if not state.in_bounds(above):
        return None
    if above == target:  # the target stands on the surface: walk up next to it
        for dx, dz in ((1, 0), (0, 1), (-1, 0), (0, -1)):
            nx, nz = tx + dx, tz + dz
            if 0 <= nx < state.size and 0 <= nz < state.size:
                stand = (nx, state.surface_y(nx, nz) + 1, nz)
                return Approach(stand, up, up_from, pillars)
        return None
    down = _line_approach(state, above, target, reach, can_clear, max_digs - len(up))
    if isinstance(down, Blocked):
        return down
    return Approach(down.stand, (*up, *down.digs), (*up_from, *down.froms), pillars)


def plan_approach(
    state: WorldState,
    start: Pos,
    target: Pos,
    reach: float,
    can_clear: Callable[[str], bool],
    max_digs: int,
    blocks: Owned = 0,
) -> Approach | Blocked:
    """A way to get within ``reach`` of ``target``, digging only what owned tools can clear.

    Two candidates, as a path-finder would weigh them: the straight line (the body is
    two blocks tall: every cell it steps into and the one above must be free or
    clearable; air, water and plants need no digging), and the way over the surface
    (climb to the open sky if underground, walk over the terrain to the target's
    column, dig down to it). Where a way rises straight up, the body pillars: one of its
    ``blocks`` disposable blocks under its feet a level (``Approach.pillars``; a count,
    or a function that counts them, asked only when a way climbs straight up); a way
    that needs more than it owns is not taken (the way over the surface climbs a
    staircase instead, when it can). The one that digs fewer blocks wins, the straight
    line on ties, unless the straight line climbs to a target overhead and would leave
    the body falling back out of reach (then the way over the surface is taken when
    there is one). The target itself is never dug here.
    """
    direct = _line_approach(state, start, target, reach, can_clear, max_digs)
    short = 0  # blocks the straight way needs to pillar and the body does not own
    if isinstance(direct, Approach):
        pillars = _line_pillars(state, start, target, direct)
        if pillars:
            if len(pillars) > _count(blocks):
                short = len(pillars)
            direct = Approach(direct.stand, direct.digs, direct.froms, pillars)
    climbs = target[1] - start[1] > reach
    holds = (
        isinstance(direct, Approach)
        and not short
        and (not climbs or _keeps_reach(state, direct, target, reach))
    )
    if isinstance(direct, Approach) and holds and not direct.digs:
        return direct
    # When the straight line will do, the way over the surface matters only if it digs
    # fewer blocks: a search capped there gives the same choice and stops sooner.
    cap = (
        min(max_digs, len(direct.digs) - 1) if isinstance(direct, Approach) and holds else max_digs
    )
    around = _surface_approach(state, start, target, reach, can_clear, cap, blocks)
    if isinstance(around, Approach) and (
        isinstance(direct, Blocked) or not holds or len(around.digs) < len(direct.digs)
    ):
        return around
    if short:
        return Blocked(start, state.block(start), needs_blocks=short)
    return direct


def _keeps_reach(state: WorldState, plan: Approach, target: Pos, reach: float) -> bool:
    """Whether the body, once the way is dug and it falls to the ground, is still in reach.

    A straight line that climbs steeply (up a shaft towards a block overhead) ends in the
    air, and the body falls back down out of reach unless it pillared up.
    """
    x, y, z = plan.stand
    dug = set(plan.digs)
    placed = {c for _k, c in plan.pillars}
    passable = state.passable_ids
    water = state.loaded.world.palette.ids.get("water", -1)
    while (
        y - 1 >= state.min_y
        and (x, y - 1, z) not in placed
        and ((x, y - 1, z) in dug or state.block_id((x, y - 1, z)) in passable)
    ):
        if state.block_id((x, y, z)) == water:
            break
        y -= 1
    return dist2((x, y, z), target) <= (reach + 1) ** 2


def settle(state: WorldState, pos: Pos) -> Pos:
    """Let the body fall until it stands on something (water holds it up)."""
    x, y, z = pos
    passable = state.passable_ids
    water = state.loaded.world.palette.ids.get("water", -1)
    while y - 1 >= state.min_y and state.block_id((x, y - 1, z)) in passable:
        if state.block_id((x, y, z)) == water:
            break
        y -= 1
    return (x, y, z)
