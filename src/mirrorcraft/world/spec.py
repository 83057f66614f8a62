"""Biome specs: the versioned, validated description a world is generated from.

A spec is data (``mirrorcraft/data/biomes/<biome>.yaml``). It factorises a world
into terrain, resources (ore bands), ecology (trees, vegetation, water, sugar cane,
passive mobs) and runtime controls, as the paper's world-generation specs do.
Unknown keys are rejected so that a typo never silently changes a world.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mirrorcraft.safeload import DataError, load_yaml_file

SPEC_VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


PAIR_LIMITS: dict[str, tuple[int, int]] = {
    "filler_depth": (0, 16),
    "ponds": (0, 64),
    "pond_radius": (1, 16),
    "height": (1, 16),
    "clusters_per_pond": (0, 64),
    "count": (0, 1000),
    "herd_size": (1, 64),
}
"""Hard limits of each (min, max) pair a world is generated from (looser than the designer's
``design.biome_catalog.PAIR_BOUNDS``): min <= max, both inside. Past them a world cannot be
laid out (a pond wider than the world) or would take minutes to fill."""


def _check_pairs(model: BaseModel) -> None:
    for name, (low, high) in PAIR_LIMITS.items():
        pair = getattr(model, name, None)
        if pair is None:
            continue
        if not (low <= pair[0] <= pair[1] <= high):
            raise ValueError(
                f"{name} must be (min, max) with {low} <= min <= max <= {high}, got {list(pair)}"
            )


class _Pairs(_Strict):
    @model_validator(mode="after")
    def _pairs(self) -> _Pairs:
        _check_pairs(self)
        return self


class Terrain(_Pairs):
    world_size: int = Field(128, ge=48, le=256, description="horizontal extent in blocks (x and z)")
    min_y: int = Field(-64, ge=-64, le=0)
    max_y: int = Field(112, ge=72, le=320)
    base_height: int = Field(66, ge=40, le=100, description="mean surface height")
    relief: float = Field(4.0, ge=0.0, le=24.0, description="amplitude of surface height noise")
    relief_scale: float = Field(24.0, ge=4.0, le=128.0, description="horizontal length of hills")
    top_block: str = "grass_block"
    filler_block: str = "dirt"
    filler_depth: tuple[int, int] = (3, 4)
    shore_block: str = "sand"
    stone_block: str = "stone"
    deep_block: str = "deepslate"
    deepslate_top: int = Field(0, ge=-60, le=16, description="deepslate below this y")
    bedrock_layers: int = Field(3, ge=1, le=5)
    snow_cover: bool = False
    freeze_water: bool = False


class Water(_Pairs):
    sea_level: int = Field(63, ge=30, le=100)
    ponds: tuple[int, int] = (2, 4)
    pond_radius: tuple[int, int] = (3, 6)


class OreBand(_Strict):
    block: str
    deepslate_block: str | None = None
    y_min: int
    y_max: int
    shape: Literal["uniform", "triangle"] = "triangle"
    veins_per_chunk: float = Field(ge=0.0, le=40.0)
    vein_size: tuple[int, int] = (4, 9)
    air_exposed_discard: float = Field(0.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _range(self) -> OreBand:
        if self.y_min >= self.y_max:
            raise ValueError(f"ore band {self.block}: y_min must be below y_max")
        if self.vein_size[0] < 1 or self.vein_size[0] > self.vein_size[1]:
            raise ValueError(
                f"ore band {self.block}: vein_size must be (min, max) with 1 <= min <= max"
            )
        return self


class TreeKind(_Pairs):
    log: str
    leaves: str
    weight: float = Field(1.0, gt=0.0)
    height: tuple[int, int] = (4, 6)
    canopy_radius: int = Field(2, ge=1, le=3)


class Trees(_Strict):
    per_chunk: float = Field(ge=0.0, le=20.0)
    kinds: tuple[TreeKind, ...]


class Plant(_Strict):
    block: str
    per_chunk: float = Field(ge=0.0, le=64.0)


class SugarCane(_Pairs):
    clusters_per_pond: tuple[int, int] = (2, 4)
    height: tuple[int, int] = (1, 3)
    min_total: int = Field(
        24, ge=0, le=500, description="add clusters until the world has this many cane blocks"
    )


class Mob(_Pairs):
    type: str
    count: tuple[int, int]
    herd_size: tuple[int, int] = (2, 4)


class Runtime(_Strict):
    difficulty: Literal["peaceful"] = "peaceful"
    time_of_day: int = Field(6000, ge=0, le=23999)
    daylight_cycle: bool = False
    weather_cycle: bool = False
    experience_level: int = Field(100, ge=0, le=1000)
    effects: tuple[str, ...] = ("haste", "speed", "resistance", "strength")


class BiomeSpec(_Strict):
    schema_version: Literal[1] = 1
    kind: Literal["biome"] = "biome"
    biome: str
    spec_version: str = Field(description="version of this biome's spec, recorded with results")
    terrain: Terrain
    water: Water
    ores: tuple[OreBand, ...]
    trees: Trees
    vegetation: tuple[Plant, ...] = ()
    sugar_cane: SugarCane
    mobs: tuple[Mob, ...]
    runtime: Runtime = Runtime()


class SpecError(Exception):
    """A biome spec file is unreadable or invalid; the message names the file and field."""


def load_spec(path: Path) -> BiomeSpec:
    try:
        raw = load_yaml_file(path)
    except OSError as exc:
        raise SpecError(f"{path}: cannot read ({exc.strerror})") from None
    except DataError as exc:
        raise SpecError(str(exc)) from None
    try:
        return BiomeSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SpecError(f"{path}: field {where!r}: {first['msg']}") from None
