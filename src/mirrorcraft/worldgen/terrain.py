"""Noise settings for a biome spec: relief as a 2-D noise around the base height, the surface
rule (top, filler, shore, deepslate, bedrock), no caves, aquifers or ore veins."""

from __future__ import annotations

from typing import Any

from mirrorcraft.world.spec import BiomeSpec
from mirrorcraft.worldgen.features import state

RELIEF_RANGE = 32
"""Half-height of the density gradient around the base height; relief (<= 24) stays inside it."""

NOISE_ROUTER_FIELDS = (
    "barrier",
    "fluid_level_floodedness",
    "fluid_level_spread",
    "lava",
    "temperature",
    "vegetation",
    "continents",
    "erosion",
    "depth",
    "ridges",
    "initial_density_without_jaggedness",
    "final_density",
    "vein_toggle",
    "vein_ridged",
    "vein_gap",
)


def _floor16(value: int) -> int:
    return (value // 16) * 16


def _ceil16(value: int) -> int:
    return -((-value) // 16) * 16


def relief_noise() -> dict[str, Any]:
    """A two-octave noise; density functions scale it horizontally by the spec's relief_scale."""
    return {"firstOctave": 0, "amplitudes": [1.0, 0.5]}


def density(spec: BiomeSpec, noise_id: str) -> dict[str, Any]:
    """Solid below ``base_height + relief * n(x, z)``, air above (the zero crossing)."""
    t = spec.terrain
    gradient = {
        "type": "minecraft:y_clamped_gradient",
        "from_y": t.base_height - RELIEF_RANGE,
        "to_y": t.base_height + RELIEF_RANGE,
        "from_value": 1.0,
        "to_value": -1.0,
    }
    if t.relief == 0:
        return gradient
    relief = {
        "type": "minecraft:noise",
        "noise": noise_id,
        "xz_scale": round(1.0 / t.relief_scale, 6),
        "y_scale": 0.0,
    }
    return {
        "type": "minecraft:add",
        "argument1": gradient,
        "argument2": {
            "type": "minecraft:mul",
            "argument1": round(t.relief / RELIEF_RANGE, 6),
            "argument2": relief,
        },
    }


def _block_rule(block: str, properties: dict[str, str] | None = None) -> dict[str, Any]:
    return {"type": "minecraft:block", "result_state": state(block, properties)}


def surface_rule(spec: BiomeSpec, axis_blocks: frozenset[str]) -> dict[str, Any]:
    t = spec.terrain

    def block(name: str) -> dict[str, Any]:
        return _block_rule(name, {"axis": "y"} if name in axis_blocks else None)

    dry = {
        "type": "minecraft:water",
        "offset": -1,
        "surface_depth_multiplier": 0,
        "add_stone_depth": False,
    }
    top = {
        "type": "minecraft:condition",
        "if_true": {
            "type": "minecraft:stone_depth",
            "offset": 0,
            "add_surface_depth": False,
            "secondary_depth_range": 0,
            "surface_type": "floor",
        },
        "then_run": {
            "type": "minecraft:sequence",
            "sequence": [
                {"type": "minecraft:condition", "if_true": dry, "then_run": block(t.top_block)},
                block(t.shore_block),
            ],
        },
    }
    filler = {
        "type": "minecraft:condition",
        "if_true": {
            "type": "minecraft:stone_depth",
            "offset": t.filler_depth[0] - 1,
            "add_surface_depth": True,
            "secondary_depth_range": max(t.filler_depth[1] - t.filler_depth[0], 0),
            "surface_type": "floor",
        },
        "then_run": block(t.filler_block),
    }
    return {
        "type": "minecraft:sequence",
        "sequence": [
            {
                "type": "minecraft:condition",
                "if_true": {
                    "type": "minecraft:vertical_gradient",
                    "random_name": "minecraft:bedrock_floor",
                    "true_at_and_below": {"above_bottom": 0},
                    "false_at_and_above": {"above_bottom": t.bedrock_layers},
                },
                "then_run": block("bedrock"),
            },
            {
                "type": "minecraft:condition",
                "if_true": {"type": "minecraft:above_preliminary_surface"},
                "then_run": {"type": "minecraft:sequence", "sequence": [top, filler]},
            },
            {
                "type": "minecraft:condition",
                "if_true": {
                    "type": "minecraft:vertical_gradient",
                    "random_name": "minecraft:deepslate",
                    "true_at_and_below": {"absolute": t.deepslate_top - 4},
                    "false_at_and_above": {"absolute": t.deepslate_top},
                },
                "then_run": block(t.deep_block),
            },
        ],
    }


def noise_settings(spec: BiomeSpec, noise_id: str, axis_blocks: frozenset[str]) -> dict[str, Any]:
    t = spec.terrain
    min_y = _floor16(t.min_y)
    height = _ceil16(t.max_y - min_y)
    final = density(spec, noise_id)
    router: dict[str, Any] = {name: 0.0 for name in NOISE_ROUTER_FIELDS}
    router["initial_density_without_jaggedness"] = final
    router["final_density"] = final
    return {
        "sea_level": spec.water.sea_level,
        "disable_mob_generation": False,
        "aquifers_enabled": False,
        "ore_veins_enabled": False,
        "legacy_random_source": False,
        "default_block": state(
            t.stone_block, {"axis": "y"} if t.stone_block in axis_blocks else None
        ),
        "default_fluid": state("water", {"level": "0"}),
        "noise": {"min_y": min_y, "height": height, "size_horizontal": 1, "size_vertical": 2},
        "noise_router": router,
        "spawn_target": [
            {
                "temperature": [-1.0, 1.0],
                "humidity": [-1.0, 1.0],
                "continentalness": [-1.0, 1.0],
                "erosion": [-1.0, 1.0],
                "weirdness": [-1.0, 1.0],
                "depth": 0.0,
                "offset": 0.0,
            }
        ],
        "surface_rule": surface_rule(spec, axis_blocks),
    }
