"""Climate and colours of the benchmark biomes (not in the spec: they change nothing an agent
can use, but a real server needs them). Values follow the vanilla biome of the same name."""

from __future__ import annotations

from dataclasses import dataclass

from mirrorcraft.world.spec import BiomeSpec


@dataclass(frozen=True)
class Climate:
    precipitation: str  # none | rain | snow (1.19.0-1.19.2 field)
    temperature: float
    downfall: float
    sky_color: int
    fog_color: int = 12638463
    water_color: int = 4159204
    water_fog_color: int = 329011
    foliage_color: int | None = None
    grass_color: int | None = None


_CLIMATES = {
    "plains": Climate("rain", 0.8, 0.4, 7907327),
    "taiga": Climate("rain", 0.25, 0.8, 8233983),
    "snowy_plains": Climate("snow", 0.0, 0.5, 8364543),
    "jungle": Climate("rain", 0.95, 0.9, 7842047),
    "savanna": Climate("none", 2.0, 0.0, 7254527),
}


def climate_for(spec: BiomeSpec) -> Climate:
    """The vanilla climate of the spec's biome; an unknown biome gets a plains-like one (snowy if covered)."""
    if spec.biome in _CLIMATES:
        return _CLIMATES[spec.biome]
    if spec.terrain.snow_cover:
        return Climate("snow", 0.0, 0.5, 8364543)
    return Climate("rain", 0.8, 0.4, 7907327)
