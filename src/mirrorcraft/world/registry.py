"""The benchmark's worlds by id (``plains-1`` ...): spec + seed -> a generated world, cached."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from mirrorcraft.rules.game import GameData, load_game_data
from mirrorcraft.safeload import load_yaml_file
from mirrorcraft.world.cache import generate_cached
from mirrorcraft.world.generate import GeneratedWorld, generate
from mirrorcraft.world.index import BlockIndex
from mirrorcraft.world.palette import make_palette
from mirrorcraft.world.spec import BiomeSpec, SpecError, load_spec


class UnknownWorldError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown world"


MAIN = "main"
HORIZON = "horizon"
STUDIES = (MAIN, HORIZON)
"""The packaged world sets: the main study's ten worlds and the horizon study's 25."""


@dataclass(frozen=True)
class WorldEntry:
    world_id: str
    biome: str
    seed: int
    study: str = MAIN


def _data_dir() -> Path:
    return Path(str(resources.files("mirrorcraft") / "data"))


@lru_cache(maxsize=1)
def world_table() -> dict[str, WorldEntry]:
    """Every packaged world, of every study."""
    path = _data_dir() / "worlds.yaml"
    raw = load_yaml_file(path)
    return {
        wid: WorldEntry(wid, str(v["biome"]), int(v["seed"]), str(v.get("study", MAIN)))
        for wid, v in raw["worlds"].items()
    }


def world_ids(study: str | None = MAIN) -> list[str]:
    """The packaged worlds of one study (the main study's ten by default; None: all)."""
    if study is not None and study not in STUDIES:
        raise UnknownWorldError(f"unknown world study {study!r} (known: {', '.join(STUDIES)})")
    return [w for w, e in world_table().items() if study is None or e.study == study]


@lru_cache(maxsize=16)
def biome_spec(biome: str) -> BiomeSpec:
    path = _data_dir() / "biomes" / f"{biome}.yaml"
    if not path.exists():
        raise SpecError(f"no biome spec named {biome!r}")
    return load_spec(path)


def palette_for(game: GameData):  # type: ignore[no-untyped-def]
    return make_palette(tuple(sorted(game.blocks)))


def mob_variants(game: GameData) -> dict[str, tuple[tuple[str, int], ...]]:
    """Mob type (no namespace) -> its natural variants and weights (game facts)."""
    return {
        name.removeprefix("minecraft:"): info.variant_weights
        for name, info in game.entities.items()
        if info.variant_weights
    }


@dataclass(frozen=True)
class LoadedWorld:
    """A generated world with its block index; immutable and shared by episodes."""

    world: GeneratedWorld
    index: BlockIndex
    grid_file: Path | None = None
    """The world's grid on disk (see world/cache.py): episodes map it copy-on-write."""

    @cached_property
    def solid_lut(self) -> NDArray[np.bool_]:
        """Block id -> True where the body cannot stand in it (the complement of passable)."""
        names = self.world.palette.names
        lut = np.ones(max(len(names), 1), dtype=np.bool_)
        for i in self.world.palette.passable_ids:
            if 0 <= i < lut.size:
                lut[i] = False
        return lut

    @cached_property
    def surface(self) -> NDArray[np.int64]:
        """Per (x, z) column of the generated grid: the y of its highest block the body
        cannot stand in (``min_y`` where there is none), as ``WorldState.surface_y``."""
        solid = self.solid_lut[self.world.grid]
        top = solid.shape[2] - 1 - np.argmax(solid[:, :, ::-1], axis=2)
        return np.where(solid.any(axis=2), top, 0).astype(np.int64) + self.world.min_y


FILE_WORLD_SEP = "#"
"""A world from a biome spec file: ``path/to/spec.yaml#SEED`` (path relative to the cwd)."""


def parse_file_world(world_id: str) -> tuple[Path, int] | None:
    """``designs/x.yaml#101`` -> (path, 101); None when the id does not have that form."""
    path, sep, seed = world_id.rpartition(FILE_WORLD_SEP)
    if not sep or not path.endswith((".yaml", ".yml")):
        return None
    try:
        return Path(path), int(seed)
    except ValueError:
        return None


def world_problem(world_id: str) -> str:
    """Why this world id cannot be loaded, or ``""`` when it can (file worlds are parsed)."""
    if world_id in world_table():
        return ""
    ref = parse_file_world(world_id)
    if ref is None:
        known = ", ".join(world_table())
        return (
            f"unknown world {world_id!r} (known: {known}; or a biome spec file as "
            f"PATH.yaml{FILE_WORLD_SEP}SEED)"
        )
    try:
        spec = load_spec(ref[0])
    except SpecError as exc:
        return f"world {world_id!r}: {exc}"
    problem = spec_problem(spec)
    return f"world {world_id!r}: {ref[0]}: {problem}" if problem else ""


def load_world(world_id: str) -> LoadedWorld:
    """Generate (once per process) the world with this id.

    Besides the packaged ids, ``PATH.yaml#SEED`` names a world generated from a biome spec
    file (e.g. one written by ``mirrorcraft design biome``) with that seed. Its cache key
    includes the file's bytes, so an edited file is generated afresh.
    """
    if world_id in world_table():
        return _load_packaged(world_id)
    ref = parse_file_world(world_id)
    if ref is None:
        raise UnknownWorldError(world_problem(world_id))
    try:
        data = ref[0].read_bytes()
    except OSError as exc:
        raise UnknownWorldError(
            f"world {world_id!r}: cannot read {ref[0]} ({exc.strerror})"
        ) from None
    return _load_file_world(world_id, hashlib.sha256(data).hexdigest())


@lru_cache(maxsize=16)
def _load_packaged(world_id: str) -> LoadedWorld:
    entry = world_table()[world_id]
    game = load_game_data()
    world, grid_file = generate_cached(
        world_id, biome_spec(entry.biome), entry.seed, palette_for(game), mob_variants(game)
    )
    return LoadedWorld(world, BlockIndex(world), grid_file)


@lru_cache(maxsize=8)
def _load_file_world(world_id: str, digest: str) -> LoadedWorld:
    ref = parse_file_world(world_id)
    assert ref is not None
    try:
        spec = load_spec(ref[0])
    except SpecError as exc:
        raise UnknownWorldError(f"world {world_id!r}: {exc}") from None
    problem = spec_problem(spec)
    if problem:
        raise UnknownWorldError(f"world {world_id!r}: {ref[0]}: {problem}")
    try:
        return load_custom_world(world_id, spec, ref[1])
    except (ValueError, IndexError) as exc:  # as the biome designer reports them
        raise UnknownWorldError(f"world {world_id!r}: {ref[0]}: generation failed: {exc}") from None


def spec_problem(spec: BiomeSpec) -> str:
    """A block or mob the game does not know, named in a biome spec, or ``""``. Generation
    would stop at an unknown block, and place mobs no rule knows (no loot, no health)."""
    game = load_game_data()
    t = spec.terrain
    blocks = [t.top_block, t.filler_block, t.shore_block, t.stone_block, t.deep_block]
    blocks += [b for band in spec.ores for b in (band.block, band.deepslate_block) if b]
    blocks += [b for kind in spec.trees.kinds for b in (kind.log, kind.leaves)]
    blocks += [plant.block for plant in spec.vegetation]
    known_blocks = palette_for(game).ids
    for block in blocks:
        if block not in known_blocks:
            return f"biome spec names unknown block {block!r}"
    known_mobs = {name.removeprefix("minecraft:") for name in game.entities}
    for mob in spec.mobs:
        if mob.type not in known_mobs:
            return f"biome spec names unknown mob {mob.type!r}"
    return ""


def load_custom_world(
    world_id: str, spec: BiomeSpec, seed: int, *, on_disk: bool = True
) -> LoadedWorld:
    """A world from a user's own spec and seed (not kept in memory). With ``on_disk`` it is
    kept on disk keyed by the spec's content, like every generated world (world/cache.py);
    throwaway candidates (the biome designer's) are generated in memory only."""
    game = load_game_data()
    problem = spec_problem(spec)
    if problem:
        raise ValueError(problem)
    palette, variants = palette_for(game), mob_variants(game)
    if not on_disk:
        world = generate(world_id, spec, seed, palette, variants)
        return LoadedWorld(world, BlockIndex(world))
    world, grid_file = generate_cached(world_id, spec, seed, palette, variants)
    return LoadedWorld(world, BlockIndex(world), grid_file)
