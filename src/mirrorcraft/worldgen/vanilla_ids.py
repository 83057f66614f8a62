"""Vanilla 1.19 registry ids that generated packs may reference without defining them.

The validator resolves every resource-location reference either inside the pack
or against these lists. They hold only what a MirrorCraft pack needs (plus the
common vanilla names of each kind), so a reference to anything else is reported:
that is deliberate, a whitelist rather than a full copy of the game's registries.
"""

from __future__ import annotations

DIMENSION_TYPES = frozenset(
    {
        "minecraft:overworld",
        "minecraft:overworld_caves",
        "minecraft:the_nether",
        "minecraft:the_end",
    }
)
NOISE_SETTINGS = frozenset(
    {
        "minecraft:overworld",
        "minecraft:large_biomes",
        "minecraft:amplified",
        "minecraft:nether",
        "minecraft:end",
        "minecraft:caves",
        "minecraft:floating_islands",
    }
)
MULTI_NOISE_PRESETS = frozenset({"minecraft:nether", "minecraft:overworld"})
PLACED_FEATURES = frozenset(
    {
        "minecraft:freeze_top_layer",
        "minecraft:lake_lava_surface",
        "minecraft:lake_lava_underground",
        "minecraft:patch_sugar_cane",
        "minecraft:patch_grass_plain",
        "minecraft:spring_water",
    }
)
CONFIGURED_FEATURES = frozenset(
    {"minecraft:freeze_top_layer", "minecraft:patch_sugar_cane", "minecraft:lake_lava"}
)
NOISES = frozenset(
    {
        "minecraft:surface",
        "minecraft:surface_secondary",
        "minecraft:temperature",
        "minecraft:vegetation",
        "minecraft:continentalness",
        "minecraft:erosion",
        "minecraft:ridge",
        "minecraft:offset",
    }
)
DENSITY_FUNCTIONS = frozenset(
    {"minecraft:zero", "minecraft:y", "minecraft:shift_x", "minecraft:shift_z"}
)
# Block tags the worldgen files use (vanilla 1.19 tags outside the rules pack).
BLOCK_TAGS = frozenset(
    {
        "minecraft:stone_ore_replaceables",
        "minecraft:deepslate_ore_replaceables",
        "minecraft:base_stone_overworld",
        "minecraft:dirt",
        "minecraft:sand",
        "minecraft:logs",
        "minecraft:leaves",
        "minecraft:replaceable_plants",
    }
)
ENTITY_TYPES = frozenset(
    {
        "minecraft:cow",
        "minecraft:sheep",
        "minecraft:pig",
        "minecraft:chicken",
        "minecraft:rabbit",
        "minecraft:horse",
        "minecraft:donkey",
        "minecraft:llama",
        "minecraft:wolf",
        "minecraft:fox",
        "minecraft:goat",
        "minecraft:parrot",
        "minecraft:ocelot",
        "minecraft:panda",
        "minecraft:polar_bear",
        "minecraft:villager",
        "minecraft:mooshroom",
    }
)
MOB_EFFECTS = frozenset(
    {
        "minecraft:haste",
        "minecraft:speed",
        "minecraft:resistance",
        "minecraft:strength",
        "minecraft:night_vision",
        "minecraft:saturation",
        "minecraft:regeneration",
        "minecraft:fire_resistance",
        "minecraft:water_breathing",
        "minecraft:jump_boost",
    }
)
GAMERULES = frozenset(
    {
        "announceAdvancements",
        "doDaylightCycle",
        "doWeatherCycle",
        "doMobSpawning",
        "doTraderSpawning",
        "doPatrolSpawning",
        "doInsomnia",
        "doFireTick",
        "keepInventory",
        "randomTickSpeed",
        "sendCommandFeedback",
        "spawnRadius",
        "doImmediateRespawn",
        "naturalRegeneration",
    }
)
# The commands a generated function may use (first word of each line).
FUNCTION_COMMANDS = frozenset(
    {
        "gamerule",
        "time",
        "weather",
        "difficulty",
        "effect",
        "xp",
        "experience",
        "worldborder",
        "tag",
        "execute",
        "function",
        "setworldspawn",
        "spawnpoint",
        "scoreboard",
        "clear",
        "give",
    }
)
# Scoreboard criteria a generated function may create objectives with.
SCOREBOARD_CRITERIA = frozenset({"dummy", "deathCount"})
