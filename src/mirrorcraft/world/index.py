"""Nearest-block queries over a world grid, fast enough to run on every step.

Rare block types (ores, logs, sugar cane, ...) keep their generated positions in
coordinate arrays; a query measures every candidate at once with numpy and checks
against the episode's grid that the block is still there. Common types (stone,
dirt, water, ...) are searched in cubes of growing size around the body, which
finds them within a few blocks. Blocks the agent placed are tracked by the state.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from mirrorcraft.world import census_native
from mirrorcraft.world.generate import GeneratedWorld
from mirrorcraft.world.index_windows import GROUP, Combined
from mirrorcraft.world.placed import PlacedBlocks

RARE_LIMIT = 40_000
SECTION = 8
NEAR_CUBE = 6

Pos = tuple[int, int, int]


class Hit(NamedTuple):
    """One block found by a search (a named tuple: searches make many of them)."""

    d2: int
    pos: Pos  # (x, y, z)
    block_id: int

    @property
    def distance(self) -> float:
        return float(self.d2**0.5)


def _sections_holding(grid: NDArray[np.uint16], bid: int) -> NDArray[np.int32]:
    """The (x, z, y) numbers of the SECTION-cubed sections of ``grid`` holding ``bid``."""
    mask = grid == bid
    pad = [(0, -d % SECTION) for d in grid.shape]
    if any(p for _, p in pad):
        mask = np.pad(mask, pad)
    nx, nz, ny = (d // SECTION for d in mask.shape)
    # SECTION (8) booleans along y are one 8-byte word: nonzero if any of them is set.
    rows = np.ascontiguousarray(mask).view(np.uint64).reshape(nx, SECTION, nz, SECTION, ny) != 0
    return np.argwhere(rows.any(axis=3).any(axis=1)).astype(np.int32)


class BlockIndex:
    """Generated positions per block id; shared read-only by every episode of a world."""

    def __init__(self, world: GeneratedWorld):
        grid = world.grid
        self.shape = grid.shape
        self.min_y = world.min_y
        flat = grid.ravel()
        tally = np.bincount(flat)
        present = np.flatnonzero(tally)
        self.counts: dict[int, int] = dict(
            zip(present.tolist(), tally[present].tolist(), strict=True)
        )
        # Where each id with few enough blocks is: the flat indices of its cells, ascending.
        # Only those ids are sorted (a stable sort of their cells by id), not the whole grid.
        listed = tally <= max(RARE_LIMIT, census_native.LIST_LIMIT)
        cells = np.flatnonzero(listed[flat])
        order = cells[np.argsort(flat[cells], kind="stable")]
        ends = np.cumsum(np.where(listed, tally, 0))
        runs: dict[int, NDArray[np.int64]] = {
            b: order[ends[b] - tally[b] : ends[b]] for b in present.tolist() if listed[b]
        }
        self._combos: dict[frozenset[int], Combined] = {}
        self._luts: dict[frozenset[int], NDArray[np.bool_]] = {}
        self._common: dict[frozenset[int], list[int]] = {}
        """Per set of ids asked for together: the common ones, in the set's order."""
        self._near: dict[tuple[int, int, int, int, int], NDArray[np.int32]] = {}
        self.rare: dict[
            int, tuple[NDArray[np.int64], NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]]
        ] = {}
        _, sz, sy = self.shape
        for bid, count in self.counts.items():
            if bid != 0 and count <= RARE_LIMIT:
                idx = runs[bid].astype(np.int64)
                xs = (idx // (sz * sy)).astype(np.int32)
                zs = ((idx // sy) % sz).astype(np.int32)
                ys = (idx % sy).astype(np.int32)
                self.rare[bid] = (idx, xs, ys, zs)
        # Common ids: which 8x8x8 sections contain them (generated state; mining only removes).
        self.sections: dict[int, NDArray[np.int32]] = {
            bid: _sections_holding(grid, bid)
            for bid in self.counts
            if bid != 0 and bid not in self.rare
        }
        self.section_bits = (
            census_native.SectionBits.of(self.shape, runs, self.counts, self.sections)
            if census_native.ENABLED
            else None
        )

    def _combined(self, ids: frozenset[int]) -> Combined:
        """The generated positions of several rare ids in one set of arrays, grouped by
        GROUP-block section (8) so that a query only reads the sections near the body (cached)."""
        cached = self._combos.get(ids)
        if cached is not None:
            return cached
        present = sorted(i for i in ids if i in self.rare)
        parts = [self.rare[b] for b in present]
        if parts:
            idx = np.concatenate([p[0] for p in parts])
            xs, ys, zs = (np.concatenate([p[i] for p in parts]) for i in (1, 2, 3))
            bid = np.concatenate(
                [np.full(len(p[0]), b, dtype=np.int32) for b, p in zip(present, parts, strict=True)]
            )
        else:
            idx = np.zeros(0, dtype=np.int64)
            xs = ys = zs = bid = np.zeros(0, dtype=np.int32)
        sx, sz, sy = (-(-d // GROUP) for d in self.shape)
        key = (xs // GROUP) * (sz * sy) + (zs // GROUP) * sy + ys // GROUP
        order = np.argsort(key, kind="stable")
        starts = np.searchsorted(key[order], np.arange(sx * sz * sy + 1))
        cached = Combined(
            idx[order], xs[order], ys[order], zs[order], bid[order], starts, (sx, sz, sy)
        )
        self._combos[ids] = cached
        return cached

    def nearest_each(
        self,
        grid: NDArray[np.uint16],
        placed: PlacedBlocks,
        block_ids: Iterable[int],
        pos: Pos,
        radius: float,
    ) -> dict[int, int]:
        """For each id, the squared distance to its nearest block within ``radius`` (absent: none).

        Through the compiled census where it is built (``census_native``); the same
        distances as ``_nearest_each_py``, the reference."""
        ids = frozenset(block_ids)
        bits = self.section_bits
        if bits is not None and 0 not in ids and census_native.usable(bits, grid, radius):
            best = census_native.generated_nearest(bits, self.min_y, grid, ids, pos, radius)
            return self._add_placed(best, grid, placed, ids, pos, radius)
        return self._nearest_each_py(grid, placed, ids, pos, radius)

    def _add_placed(
        self,
        best: dict[int, int],
        grid: NDArray[np.uint16],
        placed: PlacedBlocks,
        ids: frozenset[int],
        pos: Pos,
        radius: float,
    ) -> dict[int, int]:
        """``best`` (found among the generated blocks) lowered by the blocks placed since
        that are still there."""
        r2 = int(radius * radius)
        for b in placed.ids():
            if b not in ids:
                continue
            limit = best.get(b, r2 + 1)  # only a placed block nearer than that counts
            for gap2, cell in placed.cubes_by_distance(b, pos, radius):
                if gap2 >= limit:
                    break
                for p in cell:
                    d2 = _d2(p, pos)
                    if d2 < limit and grid[p[0], p[2], p[1] - self.min_y] == b:
                        best[b] = limit = d2
        return best

    def _nearest_each_py(
        self,
        grid: NDArray[np.uint16],
        placed: PlacedBlocks,
        block_ids: Iterable[int],
        pos: Pos,
        radius: float,
    ) -> dict[int, int]:
        ids = frozenset(block_ids)
        px, py, pz = pos
        pyi = py - self.min_y
        r2 = int(radius * radius)
        best: dict[int, int] = {}
        w = self._combined(ids).near(pos[0], pyi, pos[2], radius)
        if w.idx.size:
            dx, dy, dz = w.xs - px, w.ys - pyi, w.zs - pz
            d2s = dx * dx + dy * dy + dz * dz
            valid = (d2s <= r2) & (grid.ravel()[w.idx] == w.bid)
            mins = np.minimum.reduceat(np.where(valid, d2s, r2 + 1), w.firsts)
            for b, d2 in zip(w.bid[w.firsts].tolist(), mins.tolist(), strict=True):
                if d2 <= r2:
                    best[b] = int(d2)
        common = self._common.get(ids)
        if common is None:
            common = self._common[ids] = [b for b in ids if b not in self.rare and b in self.counts]
        if common:
            for b, d2 in self._cube_min(grid, common, pos, radius).items():
                best[b] = min(d2, best.get(b, d2))
        return self._add_placed(best, grid, placed, ids, pos, radius)

    def _cube_min(
        self, grid: NDArray[np.uint16], ids: list[int], pos: Pos, radius: float
    ) -> dict[int, int]:
        """Nearest squared distance per common id: a small cube first, then candidate sections."""
        px, py, pz = pos
        pyi = py - self.min_y
        sx, sz, sy = self.shape
        out: dict[int, int] = {}
        r = min(NEAR_CUBE, int(np.ceil(radius)))
        x0, z0, y0 = max(px - r, 0), max(pz - r, 0), max(pyi - r, 0)
        sub = grid[x0 : min(px + r + 1, sx), z0 : min(pz + r + 1, sz), y0 : min(pyi + r + 1, sy)]
        xs, zs, ys = np.nonzero(self._lut(ids)[sub])
        if xs.size:
            vals = sub[xs, zs, ys].astype(np.int32)
            dx, dy, dz = xs + x0 - px, ys + y0 - pyi, zs + z0 - pz
            d2s = dx * dx + dy * dy + dz * dz
            ok = d2s <= min(r * r, int(radius * radius))
            vals, d2s = vals[ok], d2s[ok]
            order = np.lexsort((d2s, vals))
            found, first = np.unique(vals[order], return_index=True)
            out = {
                int(b): int(d2s[order[i]])
                for b, i in zip(found.tolist(), first.tolist(), strict=True)
            }
        for b in ids:
            if b not in out and r < radius:
                d2 = self._section_min(grid, b, pos, radius)
                if d2 is not None:
                    out[b] = d2
        return out

    def _lut(self, ids: list[int]) -> NDArray[np.bool_]:
        """Block id -> whether it is one of ``ids`` (cached per set of ids)."""
        key = frozenset(ids)
        lut = self._luts.get(key)
        if lut is None:
            lut = np.zeros(65536, dtype=np.bool_)
            lut[sorted(key)] = True
            self._luts[key] = lut
        return lut

    def _section_min(self, grid: NDArray[np.uint16], b: int, pos: Pos, radius: float) -> int | None:
        """The nearest squared distance of ``b`` within ``radius``, scanning its candidate
        sections nearest first (exact: a section is read only while it could hold a nearer
        block than the best found)."""
        px, py, pz = pos
        pyi = py - self.min_y
        r2 = int(radius * radius)
        lo, bound = self._near_sections(b, pos, radius)
        best: int | None = None
        for i in np.argsort(bound, kind="stable").tolist():
            if bound[i] > r2 or (best is not None and bound[i] > best):
                break
            x0, z0, y0 = (int(v) for v in lo[i])
            sub = grid[x0 : x0 + SECTION, z0 : z0 + SECTION, y0 : y0 + SECTION]
            xs, zs, ys = np.nonzero(sub == b)
            if not xs.size:
                continue
            dx, dy, dz = xs + (x0 - px), ys + (y0 - pyi), zs + (z0 - pz)
            d2 = int((dx * dx + dy * dy + dz * dz).min())
            if d2 <= r2 and (best is None or d2 < best):
                best = d2
        return best

    def _near_sections(
        self, b: int, pos: Pos, radius: float
    ) -> tuple[NDArray[np.int32], NDArray[np.int64]]:
        """Origins of ``b``'s generated sections that may lie within ``radius`` of ``pos``,
        and each one's smallest possible squared distance from ``pos``.

        The candidates are kept per 8-block cell of the body (any section within the radius
        of some point of that cell), so a query only measures those few.
        """
        px, py, pz = pos
        pyi = py - self.min_y
        cell = (b, px // SECTION, pz // SECTION, pyi // SECTION, int(radius * radius))
        lo = self._near.get(cell)
        if lo is None:
            secs = self.sections.get(b)
            if secs is None or not len(secs):
                lo = np.zeros((0, 3), dtype=np.int32)
            else:
                all_lo = secs * SECTION
                c_lo = np.array(
                    [cell[1] * SECTION, cell[2] * SECTION, cell[3] * SECTION], dtype=np.int32
                )
                c_hi = c_lo + SECTION - 1
                # Gap between two boxes: the nearest any point of the body's cell can be.
                gap = np.maximum(np.maximum(all_lo - c_hi, c_lo - (all_lo + SECTION - 1)), 0)
                near = (gap * gap).sum(axis=1) <= int(radius * radius)
                lo = np.ascontiguousarray(all_lo[near])
            if len(self._near) > 4096:
                self._near.clear()
            self._near[cell] = lo
        p = np.array([px, pz, pyi], dtype=np.int32)
        gap = np.maximum(np.maximum(lo - p, p - (lo + SECTION - 1)), 0)
        return lo, (gap * gap).sum(axis=1).astype(np.int64)

    def is_rare(self, block_id: int) -> bool:
        return block_id in self.rare or block_id not in self.counts

    def nearest(
        self,
        grid: NDArray[np.uint16],
        placed: PlacedBlocks,
        block_ids: Iterable[int],
        pos: Pos,
        radius: float,
        k: int = 1,
        horizontal_only: bool = False,
    ) -> list[Hit]:
        """Up to ``k`` nearest blocks of the given ids within ``radius``, nearest first; ties
        by y, then x, then z (every block has its own place in that order, so the answer
        never depends on how a search visits blocks).

        ``pos`` and the returned positions are world coordinates (x, y, z). With
        ``horizontal_only`` the radius bounds horizontal distance and any depth counts.
        Through the compiled search where it is built (``census_native``); the same hits as
        ``_nearest_py``, the reference.
        """
        ids = frozenset(block_ids)
        bits = self.section_bits
        if (
            bits is not None
            and 0 not in ids
            and 1 <= k <= census_native.MAX_K
            and census_native.usable(bits, grid, radius)
        ):
            found = census_native.generated_k_nearest(
                bits, self.min_y, grid, ids, pos, radius, k, horizontal_only
            )
            hits = list(map(Hit._make, found))  # (a named tuple's own __new__ is slower)
            # A placed block farther than the k-th found cannot be among the k nearest (one
            # as far may be: ties go by position).
            cut = hits[k - 1].d2 + 1 if len(hits) >= k else -1
            extra = self._placed_hits(grid, placed, ids, pos, radius, horizontal_only, cut)
            if not extra:  # the compiled search's hits come sorted, each block once
                return hits
            hits.extend(extra)
            hits.sort(key=_order)
            return _dedupe(hits)[:k]
        return self._nearest_py(grid, placed, ids, pos, radius, k, horizontal_only)

    def _placed_hits(
        self,
        grid: NDArray[np.uint16],
        placed: PlacedBlocks,
        ids: Iterable[int],
        pos: Pos,
        radius: float,
        horizontal_only: bool,
        below: int = -1,
    ) -> list[Hit]:
        """The blocks of ``ids`` placed since the world was generated and still there (with
        ``below`` >= 0, only those at a squared distance under it)."""
        r2 = int(radius * radius)
        hits = []
        for bid in sorted(set(ids)):
            for p in placed.near(bid, pos, radius, below, horizontal_only):
                if (
                    _within(p, pos, r2, horizontal_only)
                    and (below < 0 or _d2(p, pos) < below)
                    and grid[p[0], p[2], p[1] - self.min_y] == bid
                ):
                    hits.append(Hit(_d2(p, pos), p, bid))
        return hits

    def _nearest_py(
        self,
        grid: NDArray[np.uint16],
        placed: PlacedBlocks,
        block_ids: Iterable[int],
        pos: Pos,
        radius: float,
        k: int = 1,
        horizontal_only: bool = False,
    ) -> list[Hit]:
        """``nearest`` in Python and numpy: the reference."""
        px, py, pz = pos
        pyi = py - self.min_y
        r2 = int(radius * radius)
        hits = self._placed_hits(grid, placed, block_ids, pos, radius, horizontal_only)
        common: list[int] = []
        flat = grid.ravel()
        for bid in sorted(set(block_ids)):
            if bid in self.rare:
                idx, xs, ys, zs = self.rare[bid]
                dx, dy, dz = xs - px, ys - pyi, zs - pz
                horiz = dx * dx + dz * dz
                d2s = horiz + dy * dy
                mask = (horiz if horizontal_only else d2s) <= r2
                if not mask.any():
                    continue
                sel = np.nonzero(mask)[0]
                alive = flat[idx[sel]] == bid
                sel = sel[alive]
                if sel.size > 4 * k:
                    keys = self._order_keys(d2s[sel], xs[sel], ys[sel], zs[sel])
                    sel = sel[np.argpartition(keys, 4 * k)[: 4 * k]]
                my = self.min_y
                hits.extend(
                    Hit(d2, (x, y + my, z), bid)
                    for d2, x, y, z in zip(
                        d2s[sel].tolist(),
                        xs[sel].tolist(),
                        ys[sel].tolist(),
                        zs[sel].tolist(),
                        strict=True,
                    )
                )
            elif bid in self.counts:
                common.append(bid)
        if common:
            hits.extend(self._cube_search(grid, common, pos, radius, k, horizontal_only))
        hits.sort(key=_order)
        return _dedupe(hits)[:k]

    def _order_keys(
        self,
        d2s: NDArray[np.integer],
        xs: NDArray[np.integer],
        yis: NDArray[np.integer],
        zs: NDArray[np.integer],
    ) -> NDArray[np.int64]:
        """One int64 per block that sorts as ``nearest`` orders hits: distance, then y, x, z.

        Every block gets its own key, so which of several equally near blocks a partial
        selection keeps never depends on numpy's selection algorithm."""
        sx, sz, sy = self.shape
        cell: NDArray[np.int64] = (yis.astype(np.int64) * sx + xs) * sz + zs
        keys: NDArray[np.int64] = d2s.astype(np.int64) * (sx * sz * sy) + cell
        return keys

    def _cube_search(
        self,
        grid: NDArray[np.uint16],
        ids: list[int],
        pos: Pos,
        radius: float,
        k: int,
        horizontal_only: bool,
    ) -> list[Hit]:
        """k nearest of common ids: a small cube around the body, else their candidate sections."""
        px, py, pz = pos
        pyi = py - self.min_y
        sx, sz, sy = self.shape
        r = min(NEAR_CUBE, int(np.ceil(radius)))
        if not horizontal_only:
            x0, z0, y0 = max(px - r, 0), max(pz - r, 0), max(pyi - r, 0)
            sub = grid[
                x0 : min(px + r + 1, sx), z0 : min(pz + r + 1, sz), y0 : min(pyi + r + 1, sy)
            ]
            hits = self._hits_in(
                sub, (x0, z0, y0), ids, pos, min(r * r, int(radius * radius)), False, k
            )
            if len(hits) >= k or r >= radius:
                return hits
        hits = []
        for b in ids:
            hits.extend(self._section_hits(grid, b, pos, radius, k, horizontal_only))
        return hits

    def _hits_in(
        self,
        sub: NDArray[np.uint16],
        origin: tuple[int, int, int],
        ids: list[int],
        pos: Pos,
        limit: int,
        horizontal_only: bool,
        k: int,
    ) -> list[Hit]:
        """The nearest blocks of ``ids`` in a piece of the grid, at least ``k`` of them
        (those nearer than ``limit``), so that the k nearest of several pieces are among them."""
        px, py, pz = pos
        pyi = py - self.min_y
        x0, z0, y0 = origin
        ids_arr = np.array(sorted(ids), dtype=np.uint16)
        xs, zs, ys = np.nonzero(sub == ids_arr[0] if len(ids) == 1 else np.isin(sub, ids_arr))
        if not xs.size:
            return []
        dx, dy, dz = xs + x0 - px, ys + y0 - pyi, zs + z0 - pz
        horiz = dx * dx + dz * dz
        d2s = horiz + dy * dy
        ok = np.nonzero((horiz if horizontal_only else d2s) <= limit)[0]
        keep = max(32, k)
        if ok.size > keep:
            keys = self._order_keys(d2s[ok], xs[ok] + x0, ys[ok] + y0, zs[ok] + z0)
            ok = ok[np.argpartition(keys, keep)[:keep]]
        kx, ky, kz = xs[ok], ys[ok], zs[ok]
        bids = sub[kx, kz, ky].tolist()
        yb = y0 + self.min_y
        return [
            Hit(d2, (x + x0, y + yb, z + z0), b)
            for d2, x, y, z, b in zip(
                d2s[ok].tolist(), kx.tolist(), ky.tolist(), kz.tolist(), bids, strict=True
            )
        ]

    def _section_hits(
        self,
        grid: NDArray[np.uint16],
        b: int,
        pos: Pos,
        radius: float,
        k: int,
        horizontal_only: bool,
    ) -> list[Hit]:
        secs = self.sections.get(b)
        if secs is None or not len(secs):
            return []
        px, py, pz = pos
        pyi = py - self.min_y
        lo = secs * SECTION
        hi = lo + SECTION - 1
        p = np.array([px, pz, pyi], dtype=np.int32)
        gap = np.maximum(np.maximum(lo - p, p - hi), 0)
        if horizontal_only:
            gap[:, 2] = 0
        bound = (gap * gap).sum(axis=1)
        r2 = int(radius * radius)
        hits: list[Hit] = []
        for i in np.argsort(bound, kind="stable").tolist():
            if bound[i] > r2:
                break
            if len(hits) >= k and bound[i] > sorted(h.d2 for h in hits)[k - 1]:
                break
            x0, z0, y0 = (int(v) for v in lo[i])
            sub = grid[x0 : x0 + SECTION, z0 : z0 + SECTION, y0 : y0 + SECTION]
            hits.extend(self._hits_in(sub, (x0, z0, y0), [b], pos, r2, horizontal_only, k))
        return hits


def _order(h: Hit) -> tuple[int, int, int, int, int]:
    """How ``nearest`` orders hits: distance, then y, x, z (then id, for a block placed where
    the same id was generated, found twice)."""
    return (h.d2, h.pos[1], h.pos[0], h.pos[2], h.block_id)


def _d2(a: Pos, b: Pos) -> int:
    return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2


def _within(p: Pos, pos: Pos, r2: int, horizontal_only: bool) -> bool:
    if horizontal_only:
        return (p[0] - pos[0]) ** 2 + (p[2] - pos[2]) ** 2 <= r2
    return _d2(p, pos) <= r2


def _dedupe(hits: list[Hit]) -> list[Hit]:
    seen: set[Pos] = set()
    out = []
    for h in hits:
        if h.pos not in seen:
            seen.add(h.pos)
            out.append(h)
    return out
