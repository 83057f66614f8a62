"""Blocks placed in an episode since its world was generated, found by where they are.

The searches (``world/index.py``) know the generated blocks; the blocks an episode placed
(stations, and the blocks a body pillars with) are added to their answers from here. They
are kept by block id and, within an id, by 8-block cube, so a search reads the cubes
its radius touches, not every block the episode ever placed: a long episode
pillars hundreds of blocks out of the pits it mines. A block later dug or replaced stays
listed; the searches check the grid.
"""

from __future__ import annotations

from collections.abc import Iterator

Pos = tuple[int, int, int]
Section = tuple[int, int]

SHIFT = 3
SIDE = 1 << SHIFT
"""Placed blocks are kept in cubes of SIDE blocks: small enough that the cube next to the
body holds few of the pillars it leaves, large enough that a search over a 32-block radius
looks up few cubes."""


class PlacedBlocks:
    """Placed positions by block id, column (x // SIDE, z // SIDE) and height (y // SIDE)."""

    __slots__ = ("_by_id",)

    def __init__(self) -> None:
        self._by_id: dict[int, dict[Section, dict[int, set[Pos]]]] = {}

    def add(self, bid: int, p: Pos) -> None:
        columns = self._by_id.setdefault(bid, {})
        column = columns.setdefault((p[0] >> SHIFT, p[2] >> SHIFT), {})
        column.setdefault(p[1] >> SHIFT, set()).add(p)

    def discard(self, bid: int, p: Pos) -> None:
        columns = self._by_id.get(bid)
        if columns is not None:
            column = columns.get((p[0] >> SHIFT, p[2] >> SHIFT))
            if column is not None:
                cell = column.get(p[1] >> SHIFT)
                if cell is not None:
                    cell.discard(p)

    def __getitem__(self, bid: int) -> set[Pos]:
        """Every listed position of ``bid`` (KeyError if none was ever placed)."""
        out: set[Pos] = set()
        for column in self._by_id[bid].values():
            for cell in column.values():
                out |= cell
        return out

    def ids(self) -> list[int]:
        return list(self._by_id)

    def _cubes(
        self, bid: int, pos: Pos, radius: float, horizontal_only: bool = False
    ) -> list[tuple[int, set[Pos]]]:
        """The cubes of ``bid`` within ``radius`` of ``pos`` (horizontally with
        ``horizontal_only``: any height) that hold a listed position, each with the least
        squared distance (in 3-D) any of its cells can have."""
        columns = self._by_id.get(bid)
        out: list[tuple[int, set[Pos]]] = []
        if not columns:
            return out
        r = int(radius) + 1
        x, y, z = pos
        for sx in range((x - r) >> SHIFT, ((x + r) >> SHIFT) + 1):
            gx = _gap(x, sx)
            for sz in range((z - r) >> SHIFT, ((z + r) >> SHIFT) + 1):
                column = columns.get((sx, sz))
                if not column:
                    continue
                flat = gx * gx + _gap(z, sz) ** 2
                for sy, cell in column.items():
                    gy = _gap(y, sy)
                    if cell and (horizontal_only or gy <= r):
                        out.append((flat + gy * gy, cell))
        return out

    def near(
        self, bid: int, pos: Pos, radius: float, below: int = -1, horizontal_only: bool = False
    ) -> Iterator[Pos]:
        """Listed positions of ``bid`` in the cubes within ``radius`` of ``pos``
        (horizontally with ``horizontal_only``, any height), and, with ``below`` >= 0, only
        cubes that could hold a position whose squared distance (in 3-D) is under ``below``:
        a superset of those that qualify; the caller measures each."""
        for gap2, cell in self._cubes(bid, pos, radius, horizontal_only):
            if below < 0 or gap2 < below:
                yield from cell

    def cubes_by_distance(self, bid: int, pos: Pos, radius: float) -> list[tuple[int, set[Pos]]]:
        """``_cubes`` nearest first (so a search for the nearest block stops at the first
        cube farther than its best)."""
        out = self._cubes(bid, pos, radius)
        out.sort(key=_first)
        return out


def _first(item: tuple[int, set[Pos]]) -> int:
    return item[0]


def _gap(v: int, section: int) -> int:
    """Distance from ``v`` to the nearest coordinate of a section of SIDE blocks."""
    lo = section << SHIFT
    if v < lo:
        return lo - v
    if v > lo + SIDE - 1:
        return v - lo - SIDE + 1
    return 0
