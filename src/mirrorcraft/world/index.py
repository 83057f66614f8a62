"""Nearest-block queries over a world grid, fast enough to run on every step.

Rare block types (ores, logs, sugar cane, ...) keep their generated positions in
coordinate arrays; a query measures every candidate at once with numpy and checks
against the episode's grid that the block is still there. Common types (stone,
dirt, water, ...) are searched in cubes of growing size around the body, which
finds them within a few blocks. Blocks the agent placed are tracked by the state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from mirrorcraft.world.generate import GeneratedWorld

RARE_LIMIT = 40_000
CUBE_STEPS = (4, 8, 16, 32, 64)

Pos = tuple[int, int, int]


@dataclass(frozen=True)
class Hit:
    d2: int
    pos: Pos  # (x, y, z)
    block_id: int

    @property
    def distance(self) -> float:
        return float(self.d2**0.5)


class BlockIndex:
    """Generated positions per block id; shared read-only by every episode of a world."""

    def __init__(self, world: GeneratedWorld):
        grid = world.grid
        self.shape = grid.shape
        self.min_y = world.min_y
        flat = grid.ravel()
        order = np.argsort(flat, kind="stable")
        ids_sorted = flat[order]
        present = np.unique(ids_sorted)
        starts = np.searchsorted(ids_sorted, present, side="left")
        ends = np.searchsorted(ids_sorted, present, side="right")
        self.counts: dict[int, int] = {}
        self.rare: dict[
            int, tuple[NDArray[np.int64], NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]]
        ] = {}
        _, sz, sy = self.shape
        for bid, start, end in zip(present.tolist(), starts.tolist(), ends.tolist(), strict=True):
            self.counts[bid] = end - start
            if bid != 0 and end - start <= RARE_LIMIT:
                idx = np.sort(order[start:end]).astype(np.int64)
                xs = (idx // (sz * sy)).astype(np.int32)
                zs = ((idx // sy) % sz).astype(np.int32)
                ys = (idx % sy).astype(np.int32)
                self.rare[bid] = (idx, xs, ys, zs)

    def is_rare(self, block_id: int) -> bool:
        return block_id in self.rare or block_id not in self.counts

    def nearest(
        self,
        grid: NDArray[np.uint16],
        placed: Mapping[int, Iterable[Pos]],
        block_ids: Iterable[int],
        pos: Pos,
        radius: float,
        k: int = 1,
        horizontal_only: bool = False,
    ) -> list[Hit]:
        """Up to ``k`` nearest blocks of the given ids within ``radius`` (sorted, deterministic).

        ``pos`` and the returned positions are world coordinates (x, y, z). With
        ``horizontal_only`` the radius bounds horizontal distance and any depth counts.
        """
        px, py, pz = pos
        pyi = py - self.min_y
        r2 = int(radius * radius)
        hits: list[Hit] = []
        common: list[int] = []
        flat = grid.ravel()
        for bid in sorted(set(block_ids)):
            for p in placed.get(bid, ()):
                d2 = _d2(p, pos)
                if (
                    _within(p, pos, r2, horizontal_only)
                    and grid[p[0], p[2], p[1] - self.min_y] == bid
                ):
                    hits.append(Hit(d2, p, bid))
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
                    sel = sel[np.argpartition(d2s[sel], 4 * k)[: 4 * k]]
                for i in sel.tolist():
                    hits.append(
                        Hit(int(d2s[i]), (int(xs[i]), int(ys[i]) + self.min_y, int(zs[i])), bid)
                    )
            elif bid in self.counts:
                common.append(bid)
        if common:
            hits.extend(self._cube_search(grid, common, pos, radius, k, horizontal_only))
        hits.sort(key=lambda h: (h.d2, h.pos[1], h.pos[0], h.pos[2], h.block_id))
        return _dedupe(hits)[:k]

    def _cube_search(
        self,
        grid: NDArray[np.uint16],
        ids: list[int],
        pos: Pos,
        radius: float,
        k: int,
        horizontal_only: bool,
    ) -> list[Hit]:
        px, py, pz = pos
        pyi = py - self.min_y
        sx, sz, sy = self.shape
        ids_arr = np.array(ids, dtype=np.uint16)
        for step in CUBE_STEPS:
            r = min(step, int(np.ceil(radius)))
            x0, x1 = max(px - r, 0), min(px + r + 1, sx)
            z0, z1 = max(pz - r, 0), min(pz + r + 1, sz)
            y0, y1 = (0, sy) if horizontal_only else (max(pyi - r, 0), min(pyi + r + 1, sy))
            sub = grid[x0:x1, z0:z1, y0:y1]
            mask = sub == ids_arr[0] if len(ids) == 1 else np.isin(sub, ids_arr)
            found = np.nonzero(mask)
            if found[0].size:
                xs, zs, ys = found[0] + x0, found[1] + z0, found[2] + y0
                dx, dy, dz = xs - px, ys - pyi, zs - pz
                horiz = dx * dx + dz * dz
                d2s = horiz + dy * dy
                limit = min(r * r, int(radius * radius))
                ok = np.nonzero((horiz if horizontal_only else d2s) <= limit)[0]
                if ok.size >= k or r >= radius:
                    if ok.size > 4 * k:
                        ok = ok[np.argpartition(d2s[ok], 4 * k)[: 4 * k]]
                    return [
                        Hit(
                            int(d2s[i]),
                            (int(xs[i]), int(ys[i]) + self.min_y, int(zs[i])),
                            int(sub[xs[i] - x0, zs[i] - z0, ys[i] - y0]),
                        )
                        for i in ok.tolist()
                    ]
            if r >= radius:
                break
        return []


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
