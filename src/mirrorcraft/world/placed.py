"""Blocks placed in an episode since its world was generated, found by where they are.

The searches (``world/index.py``) know the generated blocks; the blocks an episode placed
(stations, and the blocks a body pillars with) are added to their answers from here. They
are kept by block id and, within an id, by 16x16 column section, so a search reads the
sections its radius touches, not every block the episode ever placed: a long episode
pillars hundreds of blocks out of the pits it mines. A block later dug or replaced stays
listed; the searches check the grid.
"""

from __future__ import annotations

from collections.abc import Iterator

Pos = tuple[int, int, int]
Section = tuple[int, int]


class PlacedBlocks:
    """Placed positions by block id, column (x // 16, z // 16) and height (y // 16)."""

    __slots__ = ("_by_id",)

    def __init__(self) -> None:
        self._by_id: dict[int, dict[Section, dict[int, set[Pos]]]] = {}

    def add(self, bid: int, p: Pos) -> None:
        columns = self._by_id.setdefault(bid, {})
        column = columns.setdefault((p[0] >> 4, p[2] >> 4), {})
        column.setdefault(p[1] >> 4, set()).add(p)

    def discard(self, bid: int, p: Pos) -> None:
        columns = self._by_id.get(bid)
        if columns is not None:
            column = columns.get((p[0] >> 4, p[2] >> 4))
            if column is not None:
                cell = column.get(p[1] >> 4)
                if cell is not None:
                    cell.discard(p)

    def __contains__(self, bid: int) -> bool:
        return bid in self._by_id

    def __getitem__(self, bid: int) -> set[Pos]:
        """Every listed position of ``bid`` (KeyError if none was ever placed)."""
        out: set[Pos] = set()
        for column in self._by_id[bid].values():
            for cell in column.values():
                out |= cell
        return out

    def ids(self) -> list[int]:
        return list(self._by_id)

    def near(
        self, bid: int, pos: Pos, radius: float, below: int = -1, horizontal_only: bool = False
    ) -> Iterator[Pos]:
        """Listed positions of ``bid`` in the 16-block cubes within ``radius`` of ``pos``
        (horizontally with ``horizontal_only``, any height), and, with ``below`` >= 0, only
        cubes that could hold a position whose squared distance (in 3-D) is under ``below``:
        a superset of those that qualify; the caller measures each."""
        columns = self._by_id.get(bid)
        if not columns:
            return
        r = int(radius) + 1
        x, y, z = pos
        for sx in range((x - r) >> 4, ((x + r) >> 4) + 1):
            gx = _gap(x, sx)
            for sz in range((z - r) >> 4, ((z + r) >> 4) + 1):
                column = columns.get((sx, sz))
                if not column:
                    continue
                gz = _gap(z, sz)
                flat = gx * gx + gz * gz
                if below >= 0 and flat >= below:
                    continue
                for sy, cell in column.items():
                    if not cell:
                        continue
                    gy = _gap(y, sy)
                    if (not horizontal_only and gy > r) or (below >= 0 and flat + gy * gy >= below):
                        continue
                    yield from cell


def _gap(v: int, section: int) -> int:
    """Distance from ``v`` to the nearest coordinate of a 16-block section."""
    lo = section << 4
    if v < lo:
        return lo - v
    if v > lo + 15:
        return v - lo - 15
    return 0
