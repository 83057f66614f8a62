"""Compile a biome spec into a Minecraft Java 1.19.0-1.19.2 worldgen datapack (pack_format 10).

The pack holds the noise settings, the biome (climate, creatures, feature steps),
configured and placed features (ore bands with deepslate variants, trees, plants,
sugar cane, ponds), a world preset whose overworld uses them, and functions that
apply the world controls (``setup`` on load, ``player_setup`` for each player once,
from the tick function). Bytes are deterministic: sorted entries, fixed zip
timestamps and permissions, canonical JSON.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mirrorcraft.world.spec import BiomeSpec
from mirrorcraft.worldgen.climate import climate_for
from mirrorcraft.worldgen.features import STEPS, biome_features, mc
from mirrorcraft.worldgen.terrain import noise_settings, relief_noise

PACK_FORMAT = 10
NAMESPACE = "mirrorcraft"
COMPILER_VERSION = "1"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
EFFECT_SECONDS = 1_000_000
"""The longest effect duration 1.19 accepts: about eleven and a half days of game time."""
READY_TAG = "mirrorcraft_ready"
DEATHS = "mirrorcraft_died"
"""A deathCount objective: a player who died loses READY_TAG, so a respawn gets the setup again."""
WORLD_BORDER = 128
"""The embedded worlds are 128 x 128 blocks; the border keeps the real world the same size."""


def _location_path(kind: str, location: str, ext: str = "json") -> str:
    ns, path = location.split(":", 1)
    return f"data/{ns}/{kind}/{path}.{ext}"


def canonical_json(doc: Any) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def deterministic_zip(files: Mapping[str, bytes]) -> bytes:
    """A zip whose bytes depend only on the file names and contents."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for path in sorted(files):
            info = zipfile.ZipInfo(path, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            zf.writestr(info, files[path], compresslevel=9)
    return buf.getvalue()


@dataclass(frozen=True)
class WorldgenPack:
    """A compiled worldgen datapack: JSON documents and function texts by pack path."""

    biome: str
    spec_version: str
    spec_hash: str
    files: dict[str, Any]
    """Pack path -> JSON document, or text for ``.mcfunction`` files."""

    @property
    def namespace(self) -> str:
        return NAMESPACE

    @property
    def preset_id(self) -> str:
        return f"{NAMESPACE}:{self.biome}"

    @property
    def biome_id(self) -> str:
        return f"{NAMESPACE}:{self.biome}"

    @property
    def file_name(self) -> str:
        return f"mirrorcraft_worldgen_{self.biome}.zip"

    def file_bytes(self) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for path, doc in sorted(self.files.items()):
            out[path] = doc.encode() if isinstance(doc, str) else canonical_json(doc)
        return out

    def zip_bytes(self) -> bytes:
        return deterministic_zip(self.file_bytes())

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.zip_bytes()).hexdigest()[:16]


def spec_hash(spec: BiomeSpec) -> str:
    return hashlib.sha256(spec.model_dump_json().encode()).hexdigest()[:16]


@lru_cache(maxsize=1)
def _block_states() -> tuple[dict[str, dict[str, str]], frozenset[str]]:
    from mirrorcraft.rules.game import load_game_data

    blocks = load_game_data().blocks
    states = {name: dict(info.default_state) for name, info in blocks.items() if info.default_state}
    axis = frozenset(name for name, st in states.items() if set(st) == {"axis"})
    return states, axis


def _spawners(spec: BiomeSpec) -> dict[str, Any]:
    creatures = [
        {
            "type": mc(m.type),
            "weight": max(round((m.count[0] + m.count[1]) / 2), 1),
            "minCount": m.herd_size[0],
            "maxCount": m.herd_size[1],
        }
        for m in spec.mobs
    ]
    categories = (
        "monster",
        "creature",
        "ambient",
        "axolotls",
        "underground_water_creature",
        "water_creature",
        "water_ambient",
        "misc",
    )
    out: dict[str, Any] = {c: [] for c in categories}
    out["creature"] = creatures
    return out


def _creature_probability(spec: BiomeSpec) -> float:
    """Chunk-generation spawn chance giving the spec's mob count over the bordered world."""
    mobs = sum((m.count[0] + m.count[1]) / 2 for m in spec.mobs)
    herds = sum((m.herd_size[0] + m.herd_size[1]) / 2 for m in spec.mobs) / max(len(spec.mobs), 1)
    chunks = (WORLD_BORDER // 16) ** 2
    return round(min(mobs / max(herds, 1.0) / chunks, 0.9), 4)


def _biome_doc(spec: BiomeSpec, steps: list[list[str]]) -> dict[str, Any]:
    c = climate_for(spec)
    effects: dict[str, Any] = {
        "sky_color": c.sky_color,
        "fog_color": c.fog_color,
        "water_color": c.water_color,
        "water_fog_color": c.water_fog_color,
        "mood_sound": {
            "sound": "minecraft:ambient.cave",
            "tick_delay": 6000,
            "block_search_extent": 8,
            "offset": 2.0,
        },
    }
    if c.grass_color is not None:
        effects["grass_color"] = c.grass_color
    if c.foliage_color is not None:
        effects["foliage_color"] = c.foliage_color
    return {
        "precipitation": c.precipitation,
        "temperature": c.temperature,
        "downfall": c.downfall,
        "effects": effects,
        "spawners": _spawners(spec),
        "spawn_costs": {},
        "creature_spawn_probability": _creature_probability(spec),
        "carvers": {"air": [], "liquid": []},
        "features": steps,
    }


def _preset(biome_id: str, settings_id: str) -> dict[str, Any]:
    return {
        "dimensions": {
            "minecraft:overworld": {
                "type": "minecraft:overworld",
                "generator": {
                    "type": "minecraft:noise",
                    "biome_source": {"type": "minecraft:fixed", "biome": biome_id},
                    "settings": settings_id,
                },
            },
            "minecraft:the_nether": {
                "type": "minecraft:the_nether",
                "generator": {
                    "type": "minecraft:noise",
                    "biome_source": {"type": "minecraft:multi_noise", "preset": "minecraft:nether"},
                    "settings": "minecraft:nether",
                },
            },
            "minecraft:the_end": {
                "type": "minecraft:the_end",
                "generator": {
                    "type": "minecraft:noise",
                    "biome_source": {"type": "minecraft:the_end"},
                    "settings": "minecraft:end",
                },
            },
        }
    }


def _player_lines(spec: BiomeSpec, target: str) -> list[str]:
    lines = [
        f"effect give {target} {mc(effect)} {EFFECT_SECONDS} 0 true"
        for effect in spec.runtime.effects
    ]
    lines.append(f"xp set {target} {spec.runtime.experience_level} levels")
    lines.append(f"tag {target} add {READY_TAG}")
    return lines


def _functions(spec: BiomeSpec) -> dict[str, str]:
    r = spec.runtime
    head = f"# MirrorCraft world controls for {spec.biome} (spec {spec.spec_version}); generated, do not edit."
    setup = [
        head,
        f"gamerule doDaylightCycle {str(r.daylight_cycle).lower()}",
        f"gamerule doWeatherCycle {str(r.weather_cycle).lower()}",
        "gamerule doMobSpawning false",
        "gamerule doTraderSpawning false",
        "gamerule doPatrolSpawning false",
        "gamerule doInsomnia false",
        "gamerule announceAdvancements false",
        f"time set {r.time_of_day}",
        "weather clear",
        f"difficulty {r.difficulty}",
        "worldborder center 0 0",
        f"worldborder set {WORLD_BORDER}",
        f"scoreboard objectives add {DEATHS} deathCount",
        *_player_lines(spec, "@a"),
    ]
    player = [head, *_player_lines(spec, "@s")]
    # Death clears effects but not tags: a player who died loses the ready tag, and the setup runs
    # again once it is alive (@e, unlike @a, never selects a dead player).
    tick = [
        head,
        f"tag @a[scores={{{DEATHS}=1..}}] remove {READY_TAG}",
        f"scoreboard players reset @a[scores={{{DEATHS}=1..}}] {DEATHS}",
        f"execute as @e[type=minecraft:player,tag=!{READY_TAG}] run function {NAMESPACE}:player_setup",
    ]
    return {
        f"{NAMESPACE}:setup": "\n".join(setup) + "\n",
        f"{NAMESPACE}:player_setup": "\n".join(player) + "\n",
        f"{NAMESPACE}:tick": "\n".join(tick) + "\n",
    }


def compile_biome_pack(spec: BiomeSpec) -> WorldgenPack:
    states, axis = _block_states()
    ns, biome = NAMESPACE, spec.biome
    biome_id = f"{ns}:{biome}"
    noise_id = f"{ns}:{biome}_relief"
    files: dict[str, Any] = {}
    steps: list[list[str]] = [[] for _ in STEPS]
    for feature in biome_features(ns, spec, states):
        files[_location_path("worldgen/configured_feature", feature.name)] = feature.configured
        files[_location_path("worldgen/placed_feature", feature.name)] = feature.placed
        steps[STEPS.index(feature.step)].append(feature.name)
    if spec.terrain.snow_cover:
        steps[STEPS.index("top_layer_modification")].append("minecraft:freeze_top_layer")
    while steps and not steps[-1]:
        steps.pop()
    files[_location_path("worldgen/biome", biome_id)] = _biome_doc(spec, steps)
    files[_location_path("worldgen/noise", noise_id)] = relief_noise()
    files[_location_path("worldgen/noise_settings", biome_id)] = noise_settings(
        spec, noise_id, axis
    )
    files[_location_path("worldgen/world_preset", biome_id)] = _preset(biome_id, biome_id)
    for location, text in _functions(spec).items():
        files[_location_path("functions", location, "mcfunction")] = text
    files["data/minecraft/tags/functions/load.json"] = {"values": [f"{ns}:setup"]}
    files["data/minecraft/tags/functions/tick.json"] = {"values": [f"{ns}:tick"]}
    digest = spec_hash(spec)
    files["pack.mcmeta"] = {
        "pack": {
            "pack_format": PACK_FORMAT,
            "description": f"MirrorCraft worldgen: {biome} (spec {spec.spec_version})",
        },
        "mirrorcraft": {
            "kind": "worldgen",
            "biome": biome,
            "spec_version": spec.spec_version,
            "spec_hash": digest,
            "compiler_version": COMPILER_VERSION,
            "world_preset": biome_id,
        },
    }
    return WorldgenPack(biome, spec.spec_version, digest, dict(sorted(files.items())))


def packaged_biome_packs() -> list[WorldgenPack]:
    """The worldgen packs of the five packaged biome specs, in a fixed order."""
    from mirrorcraft.world.registry import biome_spec, world_table

    biomes = sorted({entry.biome for entry in world_table().values()})
    return [compile_biome_pack(biome_spec(b)) for b in biomes]
