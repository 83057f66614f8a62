"""Configured and placed features of a biome pack: ore bands, trees, plants, sugar cane, ponds.

Each builder returns ``(name, configured, placed, step)``: the resource name
(under the pack namespace), the two JSON documents, and the generation step the
placed feature belongs to. Only a small whitelist of 1.19 feature types is used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mirrorcraft.world.spec import BiomeSpec, OreBand, Plant, TreeKind

# GenerationStep.Decoration order in 1.19: a biome's "features" list is indexed by it.
STEPS = (
    "raw_generation",
    "lakes",
    "local_modifications",
    "underground_structures",
    "surface_structures",
    "strongholds",
    "underground_ores",
    "underground_decoration",
    "fluid_springs",
    "vegetal_decoration",
    "top_layer_modification",
)
STEP = {name: i for i, name in enumerate(STEPS)}
CHUNKS_IN_WORLD = 64
"""The world border keeps a 128 x 128 world: 8 x 8 chunks (densities per world -> per chunk)."""

SAPLINGS = {
    "oak_log": "oak_sapling",
    "birch_log": "birch_sapling",
    "spruce_log": "spruce_sapling",
    "jungle_log": "jungle_sapling",
    "acacia_log": "acacia_sapling",
    "dark_oak_log": "dark_oak_sapling",
    "mangrove_log": "mangrove_propagule",
}


@dataclass(frozen=True)
class Feature:
    name: str
    configured: dict[str, Any]
    placed: dict[str, Any]
    step: str


def mc(name: str) -> str:
    return name if ":" in name else f"minecraft:{name}"


def state(block: str, properties: Mapping[str, str] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"Name": mc(block)}
    if properties:
        doc["Properties"] = dict(sorted(properties.items()))
    return doc


def simple_provider(block: str, properties: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {"type": "minecraft:simple_state_provider", "state": state(block, properties)}


def count_provider(mean: float) -> int | dict[str, Any]:
    """An int provider whose mean is ``mean`` (a weighted pair around a fractional value)."""
    low = math.floor(mean)
    frac = round(mean - low, 2)
    if frac == 0:
        return int(low)
    return {
        "type": "minecraft:weighted_list",
        "distribution": [
            {"data": int(low), "weight": round((1 - frac) * 100)},
            {"data": int(low) + 1, "weight": round(frac * 100)},
        ],
    }


def uniform_int(low: int, high: int) -> int | dict[str, Any]:
    if low == high:
        return low
    return {"type": "minecraft:uniform", "value": {"min_inclusive": low, "max_inclusive": high}}


def _slug(text: str) -> str:
    return text.replace(":", "_").replace("/", "_")


# -- ores ---------------------------------------------------------------------------
def ore_feature(ns: str, biome: str, index: int, band: OreBand) -> Feature:
    name = f"{ns}:{biome}/ore_{index:02d}_{_slug(band.block)}"
    if band.deepslate_block:
        targets = [
            {
                "target": {
                    "predicate_type": "minecraft:tag_match",
                    "tag": "minecraft:stone_ore_replaceables",
                },
                "state": state(band.block),
            },
            {
                "target": {
                    "predicate_type": "minecraft:tag_match",
                    "tag": "minecraft:deepslate_ore_replaceables",
                },
                "state": state(band.deepslate_block),
            },
        ]
    else:
        targets = [
            {
                "target": {
                    "predicate_type": "minecraft:tag_match",
                    "tag": "minecraft:base_stone_overworld",
                },
                "state": state(band.block),
            }
        ]
    configured = {
        "type": "minecraft:ore",
        "config": {
            "size": round((band.vein_size[0] + band.vein_size[1]) / 2),
            "discard_chance_on_air_exposure": band.air_exposed_discard,
            "targets": targets,
        },
    }
    height_type = "minecraft:trapezoid" if band.shape == "triangle" else "minecraft:uniform"
    placed = {
        "feature": name,
        "placement": [
            {"type": "minecraft:count", "count": count_provider(band.veins_per_chunk)},
            {"type": "minecraft:in_square"},
            {
                "type": "minecraft:height_range",
                "height": {
                    "type": height_type,
                    "min_inclusive": {"absolute": band.y_min},
                    "max_inclusive": {"absolute": band.y_max},
                },
            },
            {"type": "minecraft:biome"},
        ],
    }
    return Feature(name, configured, placed, "underground_ores")


# -- trees --------------------------------------------------------------------------
def _tree_shape(kind: TreeKind) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    base, rand = kind.height[0], kind.height[1] - kind.height[0]
    if kind.log.startswith("acacia"):
        trunk = {
            "type": "minecraft:forking_trunk_placer",
            "base_height": base,
            "height_rand_a": max(rand, 0),
            "height_rand_b": 2,
        }
        foliage = {
            "type": "minecraft:acacia_foliage_placer",
            "radius": kind.canopy_radius,
            "offset": 0,
        }
        size = {
            "type": "minecraft:two_layers_feature_size",
            "limit": 1,
            "lower_size": 0,
            "upper_size": 2,
        }
        return trunk, foliage, size
    trunk = {
        "type": "minecraft:straight_trunk_placer",
        "base_height": base,
        "height_rand_a": rand,
        "height_rand_b": 0,
    }
    if kind.log.startswith("spruce"):
        foliage = {
            "type": "minecraft:spruce_foliage_placer",
            "radius": uniform_int(max(kind.canopy_radius - 1, 1), kind.canopy_radius),
            "offset": uniform_int(0, 2),
            "trunk_height": uniform_int(1, 2),
        }
        size = {
            "type": "minecraft:two_layers_feature_size",
            "limit": 2,
            "lower_size": 0,
            "upper_size": 2,
        }
        return trunk, foliage, size
    foliage = {
        "type": "minecraft:blob_foliage_placer",
        "radius": kind.canopy_radius,
        "offset": 0,
        "height": 3,
    }
    size = {
        "type": "minecraft:two_layers_feature_size",
        "limit": 1,
        "lower_size": 0,
        "upper_size": 1,
    }
    return trunk, foliage, size


def tree_feature(
    ns: str,
    biome: str,
    index: int,
    kind: TreeKind,
    per_chunk: float,
    default_states: Mapping[str, Mapping[str, str]],
) -> Feature:
    name = f"{ns}:{biome}/tree_{index:02d}_{_slug(kind.log)}"
    trunk, foliage, size = _tree_shape(kind)
    configured = {
        "type": "minecraft:tree",
        "config": {
            "ignore_vines": True,
            "force_dirt": False,
            "minimum_size": size,
            "dirt_provider": simple_provider("dirt"),
            "trunk_provider": simple_provider(kind.log, default_states.get(kind.log)),
            "foliage_provider": simple_provider(kind.leaves, default_states.get(kind.leaves)),
            "trunk_placer": trunk,
            "foliage_placer": foliage,
            "decorators": [],
        },
    }
    sapling = SAPLINGS.get(kind.log, "oak_sapling")
    placed = {
        "feature": name,
        "placement": [
            {"type": "minecraft:count", "count": count_provider(per_chunk)},
            {"type": "minecraft:in_square"},
            {"type": "minecraft:surface_water_depth_filter", "max_water_depth": 0},
            {"type": "minecraft:heightmap", "heightmap": "OCEAN_FLOOR"},
            {
                "type": "minecraft:block_predicate_filter",
                "predicate": {
                    "type": "minecraft:would_survive",
                    "state": state(sapling, default_states.get(sapling)),
                },
            },
            {"type": "minecraft:biome"},
        ],
    }
    return Feature(name, configured, placed, "vegetal_decoration")


# -- plants, sugar cane, ponds ------------------------------------------------------------
def _air_and_survives(block_state: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "minecraft:all_of",
        "predicates": [
            {"type": "minecraft:matching_blocks", "blocks": ["minecraft:air"]},
            {"type": "minecraft:would_survive", "state": block_state},
        ],
    }


def plant_feature(
    ns: str, biome: str, index: int, plant: Plant, default_states: Mapping[str, Mapping[str, str]]
) -> Feature:
    name = f"{ns}:{biome}/plant_{index:02d}_{_slug(plant.block)}"
    props = dict(default_states.get(plant.block) or {})
    if plant.block == "sweet_berry_bush":
        props["age"] = "3"
    block_state = state(plant.block, props)
    configured = {
        "type": "minecraft:simple_block",
        "config": {"to_place": {"type": "minecraft:simple_state_provider", "state": block_state}},
    }
    placed = {
        "feature": name,
        "placement": [
            {"type": "minecraft:count", "count": count_provider(plant.per_chunk)},
            {"type": "minecraft:in_square"},
            {"type": "minecraft:heightmap", "heightmap": "MOTION_BLOCKING"},
            {
                "type": "minecraft:block_predicate_filter",
                "predicate": _air_and_survives(block_state),
            },
            {"type": "minecraft:biome"},
        ],
    }
    return Feature(name, configured, placed, "vegetal_decoration")


def sugar_cane_feature(ns: str, spec: BiomeSpec) -> Feature:
    name = f"{ns}:{spec.biome}/sugar_cane"
    cane = state("sugar_cane", {"age": "0"})
    low, high = spec.sugar_cane.height
    configured = {
        "type": "minecraft:random_patch",
        "config": {
            "tries": 20,
            "xz_spread": 4,
            "y_spread": 0,
            "feature": {
                "feature": {
                    "type": "minecraft:block_column",
                    "config": {
                        "direction": "up",
                        "allowed_placement": {
                            "type": "minecraft:matching_blocks",
                            "blocks": ["minecraft:air"],
                        },
                        "prioritize_tip": False,
                        "layers": [
                            {
                                "height": uniform_int(low, high),
                                "provider": {
                                    "type": "minecraft:simple_state_provider",
                                    "state": cane,
                                },
                            }
                        ],
                    },
                },
                "placement": [
                    {
                        "type": "minecraft:block_predicate_filter",
                        "predicate": _air_and_survives(cane),
                    }
                ],
            },
        },
    }
    # Cane only survives beside water, so most tries fail: a few patches per chunk give
    # clusters along every pond shore.
    placed = {
        "feature": name,
        "placement": [
            {"type": "minecraft:count", "count": max(spec.sugar_cane.clusters_per_pond[1], 1)},
            {"type": "minecraft:in_square"},
            {"type": "minecraft:heightmap", "heightmap": "WORLD_SURFACE_WG"},
            {"type": "minecraft:biome"},
        ],
    }
    return Feature(name, configured, placed, "vegetal_decoration")


def pond_feature(ns: str, spec: BiomeSpec) -> Feature:
    name = f"{ns}:{spec.biome}/pond"
    configured = {
        "type": "minecraft:lake",
        "config": {
            "fluid": simple_provider("water", {"level": "0"}),
            "barrier": simple_provider(spec.terrain.shore_block),
        },
    }
    mean_ponds = max((spec.water.ponds[0] + spec.water.ponds[1]) / 2, 0.5)
    placed = {
        "feature": name,
        "placement": [
            {
                "type": "minecraft:rarity_filter",
                "chance": max(round(CHUNKS_IN_WORLD / mean_ponds), 1),
            },
            {"type": "minecraft:in_square"},
            {"type": "minecraft:heightmap", "heightmap": "WORLD_SURFACE_WG"},
            {"type": "minecraft:biome"},
        ],
    }
    return Feature(name, configured, placed, "lakes")


def biome_features(
    ns: str, spec: BiomeSpec, default_states: Mapping[str, Mapping[str, str]]
) -> list[Feature]:
    out = [pond_feature(ns, spec)]
    out += [ore_feature(ns, spec.biome, i, band) for i, band in enumerate(spec.ores)]
    total = sum(k.weight for k in spec.trees.kinds) or 1.0
    out += [
        tree_feature(ns, spec.biome, i, k, spec.trees.per_chunk * k.weight / total, default_states)
        for i, k in enumerate(spec.trees.kinds)
    ]
    out += [
        plant_feature(ns, spec.biome, i, p, default_states) for i, p in enumerate(spec.vegetation)
    ]
    out.append(sugar_cane_feature(ns, spec))
    return out
