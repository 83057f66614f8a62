"""Blocks placed in an episode are found by the searches from the cubes near the body only
(``world/placed.py``); with thousands placed, the answers equal a scan of the whole grid."""

from __future__ import annotations

import random

import numpy as np

from mirrorcraft.world.index import Hit
from mirrorcraft.world.registry import load_world
from mirrorcraft.world.state import WorldState


def _brute(state: WorldState, ids: list[int], pos: tuple[int, int, int], radius: float, flat: bool):
    xs, zs, ys = np.nonzero(np.isin(state.grid, ids))
    out = []
    for x, y, z in zip(xs.tolist(), ys.tolist(), zs.tolist(), strict=True):
        p = (x, y + state.min_y, z)
        d2 = (x - pos[0]) ** 2 + (p[1] - pos[1]) ** 2 + (z - pos[2]) ** 2
        reach = (x - pos[0]) ** 2 + (z - pos[2]) ** 2 if flat else d2
        if reach <= radius * radius:
            out.append(Hit(d2, p, int(state.grid[x, z, y])))
    return sorted(out, key=lambda h: (h.d2, h.pos[1], h.pos[0], h.pos[2], h.block_id))


def test_many_placed_blocks_are_found_as_a_full_scan_finds_them() -> None:
    state = WorldState.fresh(load_world("plains-1"))
    names = state.loaded.world.palette.ids
    rng = random.Random(7)
    kinds = ["cobblestone", "iron_ore", "crafting_table"]  # never, rarely and never generated
    spots = []
    for _ in range(3000):  # a dense clump (pillars) and scattered blocks, some then dug again
        c = (60 + rng.randint(-20, 20), rng.randint(-40, 90), 60 + rng.randint(-20, 20))
        if rng.random() < 0.3:
            c = (rng.randrange(state.size), rng.randint(-60, 100), rng.randrange(state.size))
        state.set_block(c, rng.choice(kinds))
        spots.append(c)
    for c in rng.sample(spots, 500):
        state.set_block(c, "air")
    ids = [names[k] for k in kinds]
    for _ in range(60):
        pos = (rng.randint(30, 90), rng.randint(-30, 80), rng.randint(30, 90))
        radius = rng.choice([6.0, 16.5, 32.0])
        for flat in (False, True):
            want = _brute(state, ids, pos, radius, flat)
            for k in (1, 3, 40):
                got = state.index.nearest(state.grid, state.placed, ids, pos, radius, k, flat)
                assert got == want[:k], (pos, radius, flat, k)
        near = state.index.nearest_each(state.grid, state.placed, ids, pos, radius)
        best: dict[int, int] = {}
        for h in _brute(state, ids, pos, radius, False):
            best.setdefault(h.block_id, h.d2)
        assert near == best, pos
