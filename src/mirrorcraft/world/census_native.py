"""The nearby-block census through the compiled core (``_census.c``), when it is built.

``BlockIndex._nearest_each_py`` is the reference; the C function returns the same squared
distances (the tests compare the two over random positions and block changes). It reads
the episode's grid through a per-world table of which 8x8x8 sections held which block ids
when the world was generated (``SectionBits``); ``BlockIndex.nearest_each`` adds the
blocks placed since, with the same code as the reference.

The core is optional: without it (no C compiler at install time), or with
``MIRRORCRAFT_PURE_PYTHON=1``, the reference runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

try:
    from mirrorcraft.world import _census as _core  # type: ignore[attr-defined]
except ImportError:  # not built: the Python reference runs
    _core = None

BUILT = _core is not None
"""Whether the C module was built at install time."""
ENABLED = BUILT and os.environ.get("MIRRORCRAFT_PURE_PYTHON", "") in ("", "0")
"""Whether censuses use the compiled core (read once, when the module is imported)."""
SECTION = 8
MAX_IDS = 256
"""Ids a world may hold for the compiled census (bits per section); more: the reference."""
LIST_LIMIT = 100_000
"""Ids with more blocks than this in a world are read cell by cell; the others' positions
are kept per section."""

Pos = tuple[int, int, int]


@dataclass
class SectionBits:
    """Which block ids each 8x8x8 section of a generated world holds, one bit per id, and
    where the blocks of the less common ids are, section by section."""

    bit_of: NDArray[np.int16]
    """Block id -> its bit (-1: not in the generated world)."""
    masks: NDArray[np.uint64]
    """(sections along x, z, y, 4): the bits of the ids each section holds."""
    scan: NDArray[np.uint64]
    """The bits of the ids read cell by cell (more than ``LIST_LIMIT`` blocks)."""
    lists: tuple[NDArray[np.int64], NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]]
    """The other ids' blocks, by section then id: bounds per section, and per block its
    flat grid index, its bit, and where its run of blocks of one id in the section ends."""
    shape: tuple[int, int, int] = (0, 0, 0)
    """The generated grid's shape (an episode's grid must have it)."""
    wants: dict[frozenset[int], tuple[NDArray[np.uint64], list[tuple[int, int]]]] = field(
        default_factory=dict
    )
    """Per set of ids asked for: their bits as a mask, and (bit, id) pairs."""

    @classmethod
    def of(
        cls,
        shape: tuple[int, ...],
        runs: Mapping[int, NDArray[np.int64]],
        counts: Mapping[int, int],
        sections: Mapping[int, NDArray[np.int32]],
    ) -> SectionBits | None:
        """The table of a generated grid, from each id's block count (``counts``, ascending
        ids), the flat indices of the cells of each id with at most ``LIST_LIMIT`` blocks
        (``runs``) and, for the ids with more, the (x, z, y) numbers of the sections holding
        them (``BlockIndex.sections``). None when the grid holds more than ``MAX_IDS`` ids."""
        rows = [(b, n) for b, n in counts.items() if b != 0]
        if len(rows) > MAX_IDS:
            return None
        bit_of = np.full(65536, -1, dtype=np.int16)
        sx, sz, sy = shape
        nx, nz, ny = (-(-d // SECTION) for d in (sx, sz, sy))
        has = np.zeros((nx * nz * ny, MAX_IDS), dtype=bool)
        scan = [0] * 4
        flats, bits, secs = [], [], []
        for bit, (b, n) in enumerate(rows):
            bit_of[b] = bit
            if n > LIST_LIMIT and b in sections:
                where = sections[b].astype(np.int64)
                has[(where[:, 0] * nz + where[:, 1]) * ny + where[:, 2], bit] = True
                scan[bit >> 6] |= 1 << (bit & 63)
                continue
            flat = runs[b]
            x, z, y = flat // (sz * sy), (flat // sy) % sz, flat % sy
            sec = ((x // SECTION) * nz + z // SECTION) * ny + y // SECTION
            has[sec, bit] = True
            flats.append(flat)
            bits.append(np.full(len(flat), bit, dtype=np.int64))
            secs.append(sec)
        if flats:
            sec = np.concatenate(secs)
            bit_all = np.concatenate(bits)
            o = np.lexsort((bit_all, sec))
            sec, bit_all = sec[o], bit_all[o]
            flat_all = np.concatenate(flats)[o]
            bounds = np.searchsorted(sec, np.arange(nx * nz * ny + 1)).astype(np.int64)
            run = sec * MAX_IDS + bit_all
            cut = np.flatnonzero(np.diff(run)) + 1  # where a new run starts
            run_ends = np.append(cut, len(run))
            nexts = np.repeat(run_ends, np.diff(np.append(0, run_ends)))
        else:
            flat_all = bit_all = nexts = np.zeros(0, dtype=np.int64)
            bounds = np.zeros(nx * nz * ny + 1, dtype=np.int64)
        packed = np.packbits(has, axis=1, bitorder="little")
        masks = np.ascontiguousarray(packed).view("<u8").astype(np.uint64).reshape(nx, nz, ny, 4)
        return cls(
            bit_of=bit_of,
            masks=masks,
            scan=np.array(scan, dtype=np.uint64),
            shape=(int(sx), int(sz), int(sy)),
            lists=(
                bounds,
                np.ascontiguousarray(flat_all, dtype=np.int32),
                np.ascontiguousarray(bit_all, dtype=np.int32),
                np.ascontiguousarray(nexts, dtype=np.int32),
            ),
        )

    def want(self, ids: frozenset[int]) -> tuple[NDArray[np.uint64], list[tuple[int, int]]]:
        hit = self.wants.get(ids)
        if hit is None:
            pairs = sorted(
                (int(self.bit_of[b]), b) for b in ids if 0 <= b < 65536 and self.bit_of[b] >= 0
            )
            words = [0] * 4
            for bit, _b in pairs:
                words[bit >> 6] |= 1 << (bit & 63)
            hit = self.wants[ids] = (np.array(words, dtype=np.uint64), pairs)
        return hit


MAX_RADIUS = 256.0
"""Larger radii use the reference (the C code sorts sections by a table as long as the
squared radius)."""


def usable(bits: SectionBits | None, grid: NDArray[np.uint16], radius: float) -> bool:
    """Whether the compiled census can read this grid with this table at this radius."""
    return (
        ENABLED
        and bits is not None
        and grid.dtype == np.uint16
        and grid.flags.c_contiguous
        and tuple(grid.shape) == bits.shape
        and 0 <= radius <= MAX_RADIUS
    )


def _tables(
    bits: SectionBits, grid: NDArray[np.uint16], want: NDArray[np.uint64]
) -> tuple[Any, ...]:
    """The arguments the C searches take first: the grid and its shape, the section table
    and the wanted ids' bits."""
    sx, sz, sy = grid.shape
    nx, nz, ny = bits.masks.shape[:3]
    return (grid, sx, sz, sy, bits.bit_of, want, bits.masks, nx, nz, ny, bits.scan, *bits.lists)


def generated_nearest(
    bits: SectionBits,
    min_y: int,
    grid: NDArray[np.uint16],
    ids: frozenset[int],
    pos: Pos,
    radius: float,
) -> dict[int, int]:
    """For each id, the squared distance to its nearest block of those the world was
    generated with and the grid still holds (``BlockIndex.nearest_each`` adds the placed
    ones)."""
    assert _core is not None
    px, py, pz = pos
    r2 = int(radius * radius)
    want, pairs = bits.want(ids)
    out = np.empty(MAX_IDS, dtype=np.int64)
    _core.census(*_tables(bits, grid, want), px, py - min_y, pz, r2, out)
    found = out.tolist()
    return {b: found[bit] for bit, b in pairs if found[bit] <= r2}


MAX_K = 64
"""Larger k use the reference (the C code keeps the k best in a sorted array)."""


def generated_k_nearest(
    bits: SectionBits,
    min_y: int,
    grid: NDArray[np.uint16],
    ids: frozenset[int],
    pos: Pos,
    radius: float,
    k: int,
    horizontal_only: bool,
) -> list[tuple[int, Pos, int]]:
    """The ``k`` nearest of those blocks of ``ids`` the world was generated with and the grid
    still holds, as (squared distance, position, id), nearest first: ties broken by y, x,
    z as ``BlockIndex.nearest`` does (which adds the placed blocks)."""
    assert _core is not None
    px, py, pz = pos
    want, _pairs = bits.want(ids)
    out = np.empty(5 * k, dtype=np.int64)
    tables = _tables(bits, grid, want)
    n = _core.nearest(*tables, px, py - min_y, pz, int(radius * radius), k, horizontal_only, out)
    rows = out[: 5 * n].tolist()
    return [
        (rows[i], (rows[i + 1], rows[i + 2] + min_y, rows[i + 3]), rows[i + 4])
        for i in range(0, 5 * n, 5)
    ]


PASSABLE: dict[int, tuple[object, NDArray[np.uint8]]] = {}
"""id of a set of passable block ids -> (that set, a table by block id: 1 passable)."""


def passable_table(passable: frozenset[int]) -> NDArray[np.uint8]:
    hit = PASSABLE.get(id(passable))
    if hit is None or hit[0] is not passable:
        table = np.zeros(65536, dtype=np.uint8)
        table[[b for b in passable if 0 <= b < 65536]] = 1
        if len(PASSABLE) > 64:
            PASSABLE.clear()
        hit = PASSABLE[id(passable)] = (passable, table)
    return hit[1]


def line_approach(
    grid: NDArray[np.uint16],
    min_y: int,
    start: Pos,
    target: Pos,
    reach2: float,
    passable: NDArray[np.uint8],
    clear: NDArray[np.int8],
    max_digs: int,
) -> tuple[int, Pos, tuple[Pos, ...], tuple[Pos, ...], Pos, int]:
    """``body/paths.py: _line_approach`` in C: (status, where the body stands, the dug
    cells, where the body stood for each, the cell it stopped at, that cell's id). Status
    0: a way; 1: blocked; 2: blocked, too many digs; 3: ``clear`` does not know the id yet."""
    assert _core is not None
    n = max(abs(target[0] - start[0]), abs(target[1] - start[1]), abs(target[2] - start[2]))
    rows = min(max(max_digs, 0), 5 * n) + 1
    out = np.empty(6 * rows, dtype=np.int64)
    sx, sz, sy = grid.shape
    status, x, y, z, digs, ax, ay, az, aid = _core.line_approach(
        grid, sx, sz, sy, min_y, *start, *target, float(reach2), passable, clear, max_digs, out
    )
    rows6 = out[: 6 * digs].tolist()  # per dig: the cell's x, y, z, then where the body stood
    cells = tuple(zip(rows6[0::6], rows6[1::6], rows6[2::6], strict=True))
    froms = tuple(zip(rows6[3::6], rows6[4::6], rows6[5::6], strict=True))
    return status, (x, y, z), cells, froms, (ax, ay, az), aid
