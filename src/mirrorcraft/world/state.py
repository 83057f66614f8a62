"""The mutable state of one episode's world: a fresh copy of the generated world.

Everything an episode can change lives here (blocks, placed facilities, mobs,
items on the ground, furnace fuel). A reset builds a new WorldState from the
immutable generated world, so no episode sees another's changes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from mirrorcraft.world.cache import episode_grid
from mirrorcraft.world.index import BlockIndex, Hit, Pos
from mirrorcraft.world.placed import PlacedBlocks
from mirrorcraft.world.registry import LoadedWorld

PASSABLE_EXTRA = ("water",)
CHANGE_LOG = 4096
"""Block changes remembered, so observers can update what they derived instead of redoing it."""


@dataclass
class Mob:
    id: int
    type: str
    pos: Pos
    alive: bool = True
    variant: str = ""
    """Chosen at spawn (a sheep's colour); picks the mob's loot table."""


@dataclass
class GroundDrop:
    item: str
    count: int
    pos: Pos
    enchantments: tuple[tuple[str, int], ...] = ()
    dropped_at: int = 0
    """The game tick (the body's clock) it fell at: it despawns ``timing.drop_despawn``
    ticks later, as an item on the ground does in the game."""


@dataclass
class StationState:
    """A placed furnace-like block: burn time left from fuel already inserted."""

    block: str
    burn_left: int = 0
    lit_at: int = 0
    """The game tick (the body's clock) ``burn_left`` was counted at."""

    def burn_now(self, now: int) -> int:
        """Burn time left at game tick ``now``: a lit furnace burns a tick of it every tick,
        cooking or not. The count is kept as of ``now``."""
        if now > self.lit_at:
            self.burn_left = max(self.burn_left - (now - self.lit_at), 0)
            self.lit_at = now
        return self.burn_left


@dataclass
class WorldState:
    loaded: LoadedWorld
    grid: NDArray[np.uint16]
    mobs: list[Mob]
    drops: list[GroundDrop] = field(default_factory=list)
    placed: PlacedBlocks = field(default_factory=PlacedBlocks)
    stations: dict[Pos, StationState] = field(default_factory=dict)
    explored_regions: set[tuple[int, int]] = field(default_factory=set)
    drops_changed: int = 0
    """Bumped whenever a drop is changed or removed (appending one needs no bump)."""
    mobs_changed: int = 0
    """Bumped whenever a mob dies (mobs never move, and none are added during an episode)."""
    version: int = 0
    changes: deque[tuple[Pos, int, int]] = field(default_factory=lambda: deque(maxlen=CHANGE_LOG))
    """The latest block changes (position, old id, new id); the last one is at ``version``."""
    min_y: int = field(init=False)
    max_y: int = field(init=False)
    size: int = field(init=False)
    passable_ids: frozenset[int] = field(init=False)
    solid_lut: NDArray[np.bool_] = field(init=False)
    """Shared with every episode of the world: never written."""
    _surface: dict[tuple[int, int], int | None] = field(init=False, default_factory=dict)
    """Columns where a block changed: their surface read again (None: not yet since the
    last change). The other columns' surface is the generated one."""

    def __post_init__(self) -> None:
        self.min_y = self.loaded.world.min_y
        self.size = int(self.grid.shape[0])
        self.max_y = self.min_y + int(self.grid.shape[2])
        self.passable_ids = self.loaded.world.palette.passable_ids
        self.solid_lut = self.loaded.solid_lut

    @classmethod
    def fresh(cls, loaded: LoadedWorld) -> WorldState:
        w = loaded.world
        mobs = [Mob(m.id, m.type, m.pos, variant=m.variant) for m in w.mobs]
        return cls(loaded=loaded, grid=episode_grid(w, loaded.grid_file), mobs=mobs)

    # -- geometry ----------------------------------------------------------------
    @property
    def index(self) -> BlockIndex:
        return self.loaded.index

    def in_bounds(self, p: Pos) -> bool:
        return 0 <= p[0] < self.size and 0 <= p[2] < self.size and self.min_y <= p[1] < self.max_y

    def block_id(self, p: Pos) -> int:
        x, y, z = p
        if 0 <= x < self.size and 0 <= z < self.size and self.min_y <= y < self.max_y:
            return int(self.grid.item(x, z, y - self.min_y))
        return 0

    def block(self, p: Pos) -> str:
        return self.loaded.world.palette.names[self.block_id(p)]

    def set_block(self, p: Pos, name: str) -> None:
        """Change one block; blocks that were not generated there are tracked for searches."""
        bid = self.loaded.world.palette.ids[name]
        old = self.block_id(p)
        self.placed.discard(old, p)
        self.stations.pop(p, None)
        self.grid[p[0], p[2], p[1] - self.min_y] = bid
        self._surface[(p[0], p[2])] = None
        if bid != 0:
            self.placed.add(bid, p)
        self.version += 1
        self.changes.append((p, old, bid))

    def place_block(self, p: Pos, name: str) -> None:
        self.set_block(p, name)

    def surface_y(self, x: int, z: int) -> int:
        """y of the highest non-passable block in a column (the ground under the sky).

        The generated world's answer (``LoadedWorld.surface``) until a block in the
        column changes; then the column is read again, and kept until the next change."""
        column = (x, z)
        if column in self._surface:
            y = self._surface[column]
            if y is None:
                y = self._surface[column] = self._surface_read(x, z)
            return y
        if 0 <= x < self.size and 0 <= z < self.size:
            return int(self.loaded.surface.item(x, z))
        return self._surface_read(x, z)  # as numpy indexes it (or refuses)

    def _surface_read(self, x: int, z: int) -> int:
        """``surface_y`` read from the grid (the reference the tests compare with)."""
        solid = np.flatnonzero(self.solid_lut[self.grid[x, z, :]])
        return int(solid[-1]) + self.min_y if solid.size else self.min_y

    def nearest(
        self, names: list[str], pos: Pos, radius: float, k: int = 1, horizontal_only: bool = False
    ) -> list[Hit]:
        ids = [
            self.loaded.world.palette.ids[n] for n in names if n in self.loaded.world.palette.ids
        ]
        return self.index.nearest(self.grid, self.placed, ids, pos, radius, k, horizontal_only)
