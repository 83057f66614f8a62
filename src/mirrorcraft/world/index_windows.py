"""Windows of a world's generated blocks for the reference census
(``BlockIndex._nearest_each_py``): every generated position of a set of block ids,
grouped by 8x8x8 section, and for a cube around a position the entries of the sections it
overlaps, grouped by id."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

GROUP = 8


@dataclass(frozen=True)
class Combined:
    idx: NDArray[np.int64]
    xs: NDArray[np.int32]
    ys: NDArray[np.int32]
    zs: NDArray[np.int32]
    bid: NDArray[np.int32]
    starts: NDArray[np.int64]
    dims: tuple[int, int, int]
    windows: dict[tuple[int, ...], Window] = field(default_factory=dict, compare=False)

    def near(self, x: int, yi: int, z: int, radius: float) -> Window:
        """The entries in the sections overlapping the cube of ``radius`` around (x, yi, z),
        grouped by block id (cached per window: the body mostly moves within one)."""
        sx, sz, sy = self.dims
        r = int(np.ceil(radius))
        key = (
            max((x - r) // GROUP, 0),
            min((x + r) // GROUP, sx - 1),
            max((z - r) // GROUP, 0),
            min((z + r) // GROUP, sz - 1),
            max((yi - r) // GROUP, 0),
            min((yi + r) // GROUP, sy - 1),
        )
        cached = self.windows.get(key)
        if cached is not None:
            return cached
        ax0, ax1, cz0, cz1, gy0, gy1 = key
        pieces = []
        for a in range(ax0, ax1 + 1):
            for c in range(cz0, cz1 + 1):
                base = (a * sz + c) * sy
                lo, hi = int(self.starts[base + gy0]), int(self.starts[base + gy1 + 1])
                if hi > lo:
                    pieces.append(np.arange(lo, hi))
        pick = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
        pick = pick[np.argsort(self.bid[pick], kind="stable")]
        bids = self.bid[pick]
        firsts = (
            np.nonzero(np.r_[True, bids[1:] != bids[:-1]])[0]
            if bids.size
            else np.zeros(0, dtype=np.int64)
        )
        window = Window(self.idx[pick], self.xs[pick], self.ys[pick], self.zs[pick], bids, firsts)
        if len(self.windows) > 256:
            self.windows.clear()
        self.windows[key] = window
        return window


@dataclass(frozen=True)
class Window:
    idx: NDArray[np.int64]
    xs: NDArray[np.int32]
    ys: NDArray[np.int32]
    zs: NDArray[np.int32]
    bid: NDArray[np.int32]
    firsts: NDArray[np.int64]
    """Start of each block id's run (entries are grouped by id)."""
