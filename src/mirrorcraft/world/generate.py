"""Deterministic world generation from a biome spec and a seed (numpy, a second or so).

The generated world is immutable and shared between episodes; each episode works
on a copy of its grid (see ``state.py``). Layout: ``grid[x, z, y - min_y]``.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from mirrorcraft.world.noise import value_noise
from mirrorcraft.world.palette import Palette
from mirrorcraft.world.spec import BiomeSpec, OreBand, TreeKind

GENERATOR_VERSION = "2"
"""2: mobs with natural variants (sheep colours) draw one at spawn."""
REPLACEABLE_BY_ORE = ("stone", "deepslate", "granite", "diorite", "andesite", "tuff")


@dataclass(frozen=True)
class MobSpawn:
    id: int
    type: str
    pos: tuple[int, int, int]
    variant: str = ""
    """The variant drawn at spawn (a sheep's colour); empty for mobs without variants."""


def draw_variant(seed: int, mob_id: int, weights: tuple[tuple[str, int], ...]) -> str:
    """A natural variant by weight, from a draw keyed by the world seed and the mob.

    Keyed apart from the terrain's generator, so terrain and mob placement do not move.
    """
    digest = hashlib.blake2b(f"{seed}\x1fvariant\x1f{mob_id}".encode(), digest_size=8).digest()
    pick = random.Random(int.from_bytes(digest, "big")).randrange(sum(w for _v, w in weights))
    for variant, weight in weights:
        pick -= weight
        if pick < 0:
            return variant
    return weights[-1][0]


@dataclass(frozen=True)
class GeneratedWorld:
    world_id: str
    biome: str
    seed: int
    spec: BiomeSpec
    spec_hash: str
    palette: Palette
    grid: NDArray[np.uint16]
    heightmap: NDArray[np.int16]  # y of the top solid block per (x, z)
    spawn: tuple[int, int, int]
    mobs: tuple[MobSpawn, ...]
    ponds: tuple[tuple[int, int, int], ...]  # (x, z, radius)

    @property
    def size(self) -> int:
        return int(self.grid.shape[0])

    @property
    def min_y(self) -> int:
        return self.spec.terrain.min_y

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(
            f"{GENERATOR_VERSION}:{self.spec_hash}:{self.seed}".encode()
        ).hexdigest()[:16]


def spec_hash(spec: BiomeSpec) -> str:
    return hashlib.sha256(spec.model_dump_json().encode()).hexdigest()[:16]


class _Builder:
    def __init__(self, spec: BiomeSpec, seed: int, palette: Palette):
        self.spec = spec
        self.t = spec.terrain
        self.palette = palette
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.size = self.t.world_size
        self.height = self.t.max_y - self.t.min_y
        self.grid = np.zeros((self.size, self.size, self.height), dtype=np.uint16)
        self.ids = palette.ids

    def yi(self, y: int) -> int:
        return y - self.t.min_y

    def block(self, name: str) -> int:
        if name not in self.ids:
            raise ValueError(f"biome spec names unknown block {name!r}")
        return self.ids[name]

    # -- terrain ---------------------------------------------------------------
    def terrain(self) -> NDArray[np.int16]:
        t = self.t
        relief = value_noise(self.size, t.relief_scale, self.rng)
        heights = np.round(t.base_height + relief * t.relief).astype(np.int16)
        heights = np.clip(heights, t.min_y + 10, t.max_y - 24)
        filler = self.rng.integers(t.filler_depth[0], t.filler_depth[1] + 1, size=heights.shape)
        transition = self.rng.integers(0, 5, size=heights.shape)
        ys = np.arange(t.min_y, t.max_y)[None, None, :]
        h = heights[:, :, None]
        g = self.grid
        g[...] = 0
        stone_top = h - filler[:, :, None]
        g[ys <= h] = self.block(t.filler_block)
        g[ys <= stone_top] = self.block(t.stone_block)
        g[ys < (t.deepslate_top + transition[:, :, None] - 4)] = self.block(t.deep_block)
        g[ys == h] = self.block(t.top_block)
        bedrock_depth = self.rng.integers(1, t.bedrock_layers + 1, size=heights.shape)[:, :, None]
        g[ys < t.min_y + bedrock_depth] = self.block("bedrock")
        return heights

    def ponds(self, heights: NDArray[np.int16]) -> list[tuple[int, int, int]]:
        w = self.spec.water
        n = int(self.rng.integers(w.ponds[0], w.ponds[1] + 1))
        ponds: list[tuple[int, int, int]] = []
        margin = w.pond_radius[1] + 4
        water, shore = self.block("water"), self.block(self.t.shore_block)
        for _ in range(n):
            for _attempt in range(20):
                cx, cz = (int(v) for v in self.rng.integers(margin, self.size - margin, size=2))
                radius = int(self.rng.integers(w.pond_radius[0], w.pond_radius[1] + 1))
                center = self.size // 2
                if abs(cx - center) < 6 and abs(cz - center) < 6:
                    continue  # keep the spawn dry
                if all(math.hypot(cx - px, cz - pz) > r + radius + 4 for px, pz, r in ponds):
                    break
            else:
                continue
            level = int(
                heights[
                    max(cx - radius, 0) : cx + radius + 1, max(cz - radius, 0) : cz + radius + 1
                ].min()
            )
            for x in range(cx - radius - 2, cx + radius + 3):
                for z in range(cz - radius - 2, cz + radius + 3):
                    d = math.hypot(x - cx, z - cz)
                    top = int(heights[x, z])
                    if d <= radius:
                        depth = 1 + int((radius - d) / max(radius, 1) * 2.5)
                        floor = level - depth
                        self.grid[x, z, self.yi(floor + 1) : self.yi(max(top, level)) + 1] = 0
                        self.grid[x, z, self.yi(floor + 1) : self.yi(level) + 1] = water
                        self.grid[x, z, self.yi(floor)] = shore
                        heights[x, z] = floor
                    elif d <= radius + 2:
                        # A flat shore at water level, so sugar cane has somewhere to grow.
                        filler = self.block(self.t.filler_block)
                        self.grid[x, z, self.yi(level) + 1 : self.yi(max(top, level)) + 1] = 0
                        if top < level:
                            self.grid[x, z, self.yi(top) : self.yi(level)] = filler
                        self.grid[x, z, self.yi(level)] = shore
                        heights[x, z] = level
            ponds.append((cx, cz, radius))
        return ponds

    # -- resources -------------------------------------------------------------
    def ore(self, band: OreBand) -> None:
        chunks = (self.size / 16) ** 2
        veins = round(band.veins_per_chunk * chunks)
        main = self.block(band.block)
        deep = self.block(band.deepslate_block) if band.deepslate_block else main
        stone_ids = {self.ids[n] for n in REPLACEABLE_BY_ORE if n in self.ids}
        deep_ids = {self.ids[n] for n in ("deepslate", "tuff") if n in self.ids}
        lo, hi = max(band.y_min, self.t.min_y + 1), min(band.y_max, self.t.max_y - 1)
        if lo >= hi:
            return
        g = self.grid
        for _ in range(veins):
            if band.shape == "triangle":
                y = round(self.rng.triangular(lo, (lo + hi) / 2, hi))
            else:
                y = int(self.rng.integers(lo, hi + 1))
            x, z = (int(v) for v in self.rng.integers(1, self.size - 1, size=2))
            size = int(self.rng.integers(band.vein_size[0], band.vein_size[1] + 1))
            steps = self.rng.integers(-1, 2, size=(size, 3))
            for dx, dy, dz in steps:
                x = min(max(x + int(dx), 1), self.size - 2)
                z = min(max(z + int(dz), 1), self.size - 2)
                y = min(max(y + int(dy), lo), hi)
                yi = self.yi(y)
                current = int(g[x, z, yi])
                if current not in stone_ids:
                    continue
                if (
                    band.air_exposed_discard > 0
                    and self._touches_air(x, z, yi)
                    and self.rng.random() < band.air_exposed_discard
                ):
                    continue
                g[x, z, yi] = deep if current in deep_ids else main

    def _touches_air(self, x: int, z: int, yi: int) -> bool:
        g = self.grid
        for dx, dz, dy in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
            if 0 <= yi + dy < self.height and g[x + dx, z + dz, yi + dy] == 0:
                return True
        return False

    # -- ecology ---------------------------------------------------------------
    def trees(self, heights: NDArray[np.int16]) -> None:
        spec = self.spec.trees
        count = round(spec.per_chunk * (self.size / 16) ** 2)
        weights = np.array([k.weight for k in spec.kinds])
        weights = weights / weights.sum()
        top = self.block(self.t.top_block)
        placed: list[tuple[int, int]] = []
        center = self.size // 2
        for _ in range(count):
            for _attempt in range(8):
                x, z = (int(v) for v in self.rng.integers(3, self.size - 3, size=2))
                if abs(x - center) <= 1 and abs(z - center) <= 1:
                    continue
                if self.grid[x, z, self.yi(int(heights[x, z]))] != top:
                    continue
                if any(abs(x - px) < 4 and abs(z - pz) < 4 for px, pz in placed):
                    continue
                break
            else:
                continue
            kind = spec.kinds[int(self.rng.choice(len(spec.kinds), p=weights))]
            self._tree(x, z, int(heights[x, z]), kind)
            placed.append((x, z))

    def _tree(self, x: int, z: int, ground: int, kind: TreeKind) -> None:
        g = self.grid
        log, leaves = self.block(kind.log), self.block(kind.leaves)
        trunk = int(self.rng.integers(kind.height[0], kind.height[1] + 1))
        top = ground + trunk
        if self.yi(top) + 2 >= self.height:
            return
        g[x, z, self.yi(ground)] = self.block("dirt")
        r = kind.canopy_radius
        for y in range(top - 2, top + 2):
            layer_r = r if y < top else max(r - 1, 1)
            for dx in range(-layer_r, layer_r + 1):
                for dz in range(-layer_r, layer_r + 1):
                    if (
                        abs(dx) == layer_r
                        and abs(dz) == layer_r
                        and (y >= top or self.rng.random() < 0.5)
                    ):
                        continue
                    xx, zz = x + dx, z + dz
                    if 0 <= xx < self.size and 0 <= zz < self.size and g[xx, zz, self.yi(y)] == 0:
                        g[xx, zz, self.yi(y)] = leaves
        g[x, z, self.yi(ground + 1) : self.yi(top) + 1] = log

    def plants(self, heights: NDArray[np.int16]) -> None:
        top = self.block(self.t.top_block)
        for plant in self.spec.vegetation:
            pid = self.block(plant.block)
            count = round(plant.per_chunk * (self.size / 16) ** 2)
            xs = self.rng.integers(0, self.size, size=count)
            zs = self.rng.integers(0, self.size, size=count)
            for x, z in zip(xs.tolist(), zs.tolist(), strict=True):
                yi = self.yi(int(heights[x, z]))
                if self.grid[x, z, yi] == top and self.grid[x, z, yi + 1] == 0:
                    self.grid[x, z, yi + 1] = pid

    def sugar_cane(self, heights: NDArray[np.int16], ponds: list[tuple[int, int, int]]) -> None:
        cane, water = self.block("sugar_cane"), self.block("water")
        soil = {
            self.block(n)
            for n in ("grass_block", "dirt", "sand", "podzol", "coarse_dirt", "red_sand")
            if n in self.ids
        }
        spec = self.spec.sugar_cane
        spare: list[tuple[int, int, int]] = []
        for cx, cz, radius in ponds:
            spots = []
            for x in range(cx - radius - 2, cx + radius + 3):
                for z in range(cz - radius - 2, cz + radius + 3):
                    yi = self.yi(int(heights[x, z]))
                    if self.grid[x, z, yi] not in soil or self.grid[x, z, yi + 1] != 0:
                        continue
                    if any(
                        self.grid[x + dx, z + dz, yi] == water
                        for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1))
                    ):
                        spots.append((x, z, yi))
            if not spots:
                continue
            n = int(self.rng.integers(spec.clusters_per_pond[0], spec.clusters_per_pond[1] + 1))
            order = self.rng.permutation(len(spots)).tolist()
            for i in order[: n * 2]:
                x, z, yi = spots[i]
                tall = int(self.rng.integers(spec.height[0], spec.height[1] + 1))
                self.grid[x, z, yi + 1 : yi + 1 + tall] = cane
            spare += [spots[i] for i in order[n * 2 :]]
        # Keep every world supplied: more clusters on free shore spots until min_total is met.
        total = int((self.grid == cane).sum())
        for x, z, yi in spare:
            if total >= spec.min_total:
                break
            if self.grid[x, z, yi + 1] != 0:
                continue
            tall = int(self.rng.integers(spec.height[0], spec.height[1] + 1))
            self.grid[x, z, yi + 1 : yi + 1 + tall] = cane
            total += tall

    def snow(self, heights: NDArray[np.int16]) -> None:
        if self.t.snow_cover:
            snow = self.block("snow")
            for x in range(self.size):
                for z in range(self.size):
                    yi = self.yi(int(heights[x, z]))
                    if (
                        self.grid[x, z, yi] == self.block(self.t.top_block)
                        and self.grid[x, z, yi + 1] == 0
                    ):
                        self.grid[x, z, yi + 1] = snow
        if self.t.freeze_water:
            water, ice = self.block("water"), self.block("ice")
            level = self.yi(self.spec.water.sea_level)
            surface = self.grid[:, :, : self.height]
            col_top = self.height - 1 - np.argmax(surface[:, :, ::-1] != 0, axis=2)
            for x in range(self.size):
                for z in range(self.size):
                    yi = int(col_top[x, z])
                    if self.grid[x, z, yi] == water and yi <= level + 4:
                        self.grid[x, z, yi] = ice

    def mobs(self, heights: NDArray[np.int16], ponds: list[tuple[int, int, int]]) -> list[MobSpawn]:
        out: list[MobSpawn] = []
        land = {
            self.block(n) for n in (self.t.top_block, "dirt", "sand", "podzol") if n in self.ids
        }
        for mob in self.spec.mobs:
            target = int(self.rng.integers(mob.count[0], mob.count[1] + 1))
            placed = 0
            while placed < target:
                hx, hz = (int(v) for v in self.rng.integers(8, self.size - 8, size=2))
                herd = int(self.rng.integers(mob.herd_size[0], mob.herd_size[1] + 1))
                for _ in range(min(herd, target - placed)):
                    x = min(max(hx + int(self.rng.integers(-3, 4)), 0), self.size - 1)
                    z = min(max(hz + int(self.rng.integers(-3, 4)), 0), self.size - 1)
                    y = int(heights[x, z])
                    if self.grid[x, z, self.yi(y)] not in land:
                        continue
                    out.append(MobSpawn(len(out), mob.type, (x, y + 1, z)))
                    placed += 1
                if placed == 0 and len(out) > 10_000:
                    break
        return out

    def spawn(self, heights: NDArray[np.int16]) -> tuple[int, int, int]:
        c = self.size // 2
        water = self.block("water")
        for r in range(0, self.size // 2):
            for dx in range(-r, r + 1):
                for dz in range(-r, r + 1):
                    x, z = c + dx, c + dz
                    yi = self.yi(int(heights[x, z]))
                    if self.grid[x, z, yi] != water and self.grid[x, z, yi + 1] in (
                        0,
                        self.ids.get("snow", -1),
                    ):
                        return (x, int(heights[x, z]) + 1, z)
        return (c, int(heights[c, c]) + 1, c)


def generate(
    world_id: str,
    spec: BiomeSpec,
    seed: int,
    palette: Palette,
    variants: Mapping[str, tuple[tuple[str, int], ...]] | None = None,
) -> GeneratedWorld:
    """The world for a spec and seed; ``variants``: mob type -> (variant, weight) to draw from."""
    b = _Builder(spec, seed, palette)
    heights = b.terrain()
    ponds = b.ponds(heights)
    for band in spec.ores:
        b.ore(band)
    b.trees(heights)
    b.sugar_cane(heights, ponds)
    b.plants(heights)
    b.snow(heights)
    mobs = b.mobs(heights, ponds)
    table = variants or {}
    mobs = [
        replace(m, variant=draw_variant(seed, m.id, table[m.type])) if table.get(m.type) else m
        for m in mobs
    ]
    spawn = b.spawn(heights)
    grid = b.grid
    grid.setflags(write=False)
    heights.setflags(write=False)
    return GeneratedWorld(
        world_id=world_id,
        biome=spec.biome,
        seed=seed,
        spec=spec,
        spec_hash=spec_hash(spec),
        palette=palette,
        grid=grid,
        heightmap=heights,
        spawn=spawn,
        mobs=tuple(mobs),
        ponds=tuple(ponds),
    )
