"""Block states the world grid does not store, derived from where a block stands.

The grid keeps one id per cell. A block two cells tall (tall grass, large fern, the
tall flowers, doors: every block whose ``half`` property is ``lower``/``upper``) is
two cells of the same id; which half a cell is follows from the cells of that id
under it (the bottom one is the lower half). Every other block is in its default
state (snow one layer deep, logs upright...).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from mirrorcraft.rules.game import BlockInfo
from mirrorcraft.world.index import Pos
from mirrorcraft.world.state import WorldState

HALVES = ("lower", "upper")
AIR_BLOCKS = frozenset({"air", "cave_air", "void_air"})
"""The blocks vanilla's ``isAir`` is true for."""
_EMPTY: Mapping[str, str] = MappingProxyType({})


def is_two_high(info: BlockInfo | None) -> bool:
    return info is not None and info.default_state.get("half") in HALVES


def half_at(state: WorldState, pos: Pos, name: str) -> str:
    """``lower`` or ``upper`` for a cell of a two-high block."""
    x, y, z = pos
    run = 0
    while y - run - 1 >= state.min_y and state.block((x, y - run - 1, z)) == name:
        run += 1
    return HALVES[run % 2]


def block_state(
    state: WorldState, blocks: Mapping[str, BlockInfo], pos: Pos
) -> tuple[str, Mapping[str, str]]:
    """(block id, state properties) of the block at ``pos``."""
    name = state.block(pos)
    info = blocks.get(name)
    if info is None:
        return name, _EMPTY
    if is_two_high(info):
        props = dict(info.default_state)
        props["half"] = half_at(state, pos, name)
        return name, props
    return name, info.default_state


def partner(state: WorldState, pos: Pos, name: str) -> Pos | None:
    """The other half of a two-high block at ``pos``, when it is there."""
    x, y, z = pos
    other = (x, y + 1, z) if half_at(state, pos, name) == "lower" else (x, y - 1, z)
    if state.in_bounds(other) and state.block(other) == name:
        return other
    return None
