"""The benchmark's worlds by id (``plains-1`` ...): spec + seed -> a generated world, cached."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from mirrorcraft.rules.game import GameData, load_game_data
from mirrorcraft.world.generate import GeneratedWorld, generate
from mirrorcraft.world.index import BlockIndex
from mirrorcraft.world.palette import make_palette
from mirrorcraft.world.spec import BiomeSpec, SpecError, load_spec


class UnknownWorldError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown world"


@dataclass(frozen=True)
class WorldEntry:
    world_id: str
    biome: str
    seed: int


def _data_dir() -> Path:
    return Path(str(resources.files("mirrorcraft") / "data"))


@lru_cache(maxsize=1)
def world_table() -> dict[str, WorldEntry]:
    path = _data_dir() / "worlds.yaml"
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {
        wid: WorldEntry(wid, str(v["biome"]), int(v["seed"])) for wid, v in raw["worlds"].items()
    }


def world_ids() -> list[str]:
    return list(world_table())


@lru_cache(maxsize=16)
def biome_spec(biome: str) -> BiomeSpec:
    path = _data_dir() / "biomes" / f"{biome}.yaml"
    if not path.exists():
        raise SpecError(f"no biome spec named {biome!r}")
    return load_spec(path)


def palette_for(game: GameData):  # type: ignore[no-untyped-def]
    return make_palette(tuple(sorted(game.blocks)))


@dataclass(frozen=True)
class LoadedWorld:
    """A generated world with its block index; immutable and shared by episodes."""

    world: GeneratedWorld
    index: BlockIndex


@lru_cache(maxsize=16)
def load_world(world_id: str) -> LoadedWorld:
    """Generate (once per process) the world with this id."""
    table = world_table()
    if world_id not in table:
        known = ", ".join(table)
        raise UnknownWorldError(f"unknown world {world_id!r} (known: {known})")
    entry = table[world_id]
    game = load_game_data()
    world = generate(world_id, biome_spec(entry.biome), entry.seed, palette_for(game))
    return LoadedWorld(world, BlockIndex(world))


def load_custom_world(world_id: str, spec: BiomeSpec, seed: int) -> LoadedWorld:
    """A world from a user's own spec and seed (not cached)."""
    world = generate(world_id, spec, seed, palette_for(load_game_data()))
    return LoadedWorld(world, BlockIndex(world))
