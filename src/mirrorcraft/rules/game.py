"""Game facts that the real game hard-codes rather than reads from datapacks.

Block properties, item stack sizes, tool tiers and fuel burn times live in
``mirrorcraft/data/game/*.json`` (generated from minecraft-data and vanilla
facts by ``scripts/gen_vanilla_pack.py``). A datapack cannot change them, in
the game or here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mirrorcraft.rules.errors import RulesError
from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.safeload import DataError, load_json_file

TIER_LEVELS = {"wood": 0, "gold": 0, "stone": 1, "iron": 2, "diamond": 3, "netherite": 4}


@dataclass(frozen=True)
class BlockInfo:
    name: str
    hardness: float
    requires_tool: bool
    diggable: bool
    loot_table: str | None
    """The block's loot table (some blocks drop like another); None: drops nothing."""
    default_state: Mapping[str, str]
    """Block-state properties of the block as generated and placed (e.g. snow layers=1)."""
    experience: tuple[int, int] = (0, 0)
    """Experience points breaking it gives, drawn uniformly from this range (ores; only with
    a tool correct for its drops and without Silk Touch)."""


@dataclass(frozen=True)
class ToolInfo:
    item: str
    kind: str  # pickaxe | axe | shovel | hoe | sword | shears
    tier: str
    tier_level: int
    speed: float
    attack_damage: float
    durability: int = 0
    """Uses before it breaks (the item's max damage); 0: it never wears."""
    wear_mine: int = 0
    """Durability a broken block costs (only blocks with hardness above 0 unless ``wear_instant_blocks``)."""
    wear_hit: int = 0
    """Durability a hit on a mob costs."""
    wear_instant_blocks: bool = False
    correct_for: frozenset[str] = frozenset()
    """Blocks the game hard-codes this item as the right tool for, beyond the mineable tags."""
    attack_speed: float = 4.0
    """Full-strength attacks a second (the item's attack-speed attribute; 4 bare-handed)."""

    def mine_wear(self, hardness: float) -> int:
        """Durability breaking a block of this hardness costs (vanilla's mineBlock)."""
        return self.wear_mine if hardness != 0 or self.wear_instant_blocks else 0


@dataclass(frozen=True)
class EntityInfo:
    name: str
    max_health: float
    variant_property: str = ""
    """The property a natural spawn draws (sheep: color); empty when there is none."""
    variant_weights: tuple[tuple[str, int], ...] = ()
    """Variants and their integer weights, in a fixed order."""
    variant_loot_table: str = ""
    """Loot table location pattern; ``{variant}`` is replaced by the mob's variant."""
    experience: tuple[int, int] = (0, 0)
    """Experience points the mob gives when the player kills it, drawn uniformly."""

    def loot_table(self, variant: str) -> str | None:
        if not variant or not self.variant_loot_table:
            return None
        return self.variant_loot_table.replace("{variant}", variant)


@dataclass(frozen=True)
class GameData:
    blocks: Mapping[str, BlockInfo]
    items: Mapping[str, int]  # item -> stack size
    display_names: Mapping[str, str]
    tools: Mapping[str, ToolInfo]
    fuels: Mapping[str, int]  # "coal" or "#planks" -> burn ticks
    durability: Mapping[str, int]
    """Item -> uses before it breaks, for every damageable item (tools, armor, shears...)."""
    entities: Mapping[str, EntityInfo]
    special_recipes: Mapping[str, Mapping[str, Any]]
    """Special recipe type -> the items its engine rule tests for (ids without namespace)."""
    never_fuel: frozenset[str]
    enchanting: Mapping[str, Any]
    fingerprint: str

    @property
    def item_ids(self) -> frozenset[str]:
        return frozenset(self.items)

    @property
    def block_ids(self) -> frozenset[str]:
        return frozenset(self.blocks)


def _read(folder: Path, name: str) -> Any:
    path = folder / name
    try:
        return load_json_file(path)
    except FileNotFoundError:
        raise RulesError(f"game data file {path} is missing; reinstall mirrorcraft") from None
    except DataError as exc:
        raise RulesError(f"game data file {exc}") from None


def _ids(value: Any) -> Any:
    """Item ids in a special recipe's facts without their namespace; numbers as they are."""
    if isinstance(value, str):
        return normalize_id(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(normalize_id(v) for v in value)
    if isinstance(value, list):
        return tuple(value)
    return value


def _experience(name: str, value: Any) -> tuple[int, int]:
    """A ``[min, max]`` experience range (absent: none)."""
    if value is None:
        return (0, 0)
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(type(v) is int for v in value)
        and 0 <= value[0] <= value[1] <= 10_000
    ):
        return (value[0], value[1])
    raise RulesError(
        f"game data: {name}: experience must be [min, max], 0 <= min <= max, not {value!r}"
    )


def load_game_data(folder: Path | None = None) -> GameData:
    """Read the game facts (the packaged ones unless a folder is given)."""
    if folder is None:
        return _packaged_game_data()
    return _load(folder)


@lru_cache(maxsize=1)
def _packaged_game_data() -> GameData:
    root = resources.files("mirrorcraft") / "data" / "game"
    return _load(Path(str(root)))


def _load(folder: Path) -> GameData:
    import hashlib

    raw = {
        n: _read(folder, f"{n}.json") for n in ("blocks", "items", "tools", "fuels", "enchanting")
    }
    # Older game-data folders have no entity facts: mobs then have no variants.
    for optional in ("entities", "special_recipes"):
        if (folder / f"{optional}.json").is_file():
            raw[optional] = _read(folder, f"{optional}.json")
    blocks = {
        normalize_id(name): BlockInfo(
            normalize_id(name),
            -1.0 if info.get("hardness") is None else float(info["hardness"]),
            bool(info.get("requires_tool", False)),
            bool(info.get("diggable", True)),
            info["loot_table"]
            if "loot_table" in info
            else f"minecraft:blocks/{normalize_id(name)}",
            MappingProxyType(dict(info.get("default_state") or {})),
            _experience(name, info.get("experience")),
        )
        for name, info in raw["blocks"].items()
    }
    items = {normalize_id(n): int(i.get("stack_size", 64)) for n, i in raw["items"].items()}
    names = {normalize_id(n): str(i.get("display_name", n)) for n, i in raw["items"].items()}
    tools = {}
    for name, info in raw["tools"].items():
        tier = str(info["tier"])
        tools[normalize_id(name)] = ToolInfo(
            normalize_id(name),
            str(info["kind"]),
            tier,
            int(info.get("tier_level", TIER_LEVELS.get(tier, 0))),
            float(info.get("speed", 1.0)),
            float(info.get("attack_damage", 1.0)),
            int(info.get("durability", 0)),
            int(info.get("wear_mine", 0)),
            int(info.get("wear_hit", 0)),
            bool(info.get("wear_instant_blocks", False)),
            frozenset(normalize_id(b) for b in info.get("correct_for", ())),
            float(info.get("attack_speed", 4.0)),
        )
    durability = {
        normalize_id(n): int(i["durability"])
        for n, i in raw["items"].items()
        if int(i.get("durability", 0)) > 0
    }
    entities = {}
    for name, info in (raw.get("entities") or {}).items():
        variants = info.get("variants") or {}
        entities[normalize_id(name)] = EntityInfo(
            normalize_id(name),
            float(info.get("max_health", 1)),
            str(variants.get("property", "")),
            tuple((str(k), int(v)) for k, v in sorted(variants.get("weights", {}).items())),
            str(variants.get("loot_table", "")),
            _experience(name, info.get("experience")),
        )
    special = {
        normalize_id(kind): MappingProxyType({k: _ids(v) for k, v in spec.items()})
        for kind, spec in (raw.get("special_recipes") or {}).items()
    }
    fuels: dict[str, int] = {}
    fuel_doc = raw["fuels"]
    burn = fuel_doc.get("burn_time", fuel_doc) if isinstance(fuel_doc, dict) else {}
    never = frozenset(
        "#" + normalize_id(n[1:]) if n.startswith("#") else normalize_id(n)
        for n in fuel_doc.get("never_fuel", [])
    )
    for key, ticks in burn.items():
        ref = "#" + normalize_id(key[1:]) if key.startswith("#") else normalize_id(key)
        fuels[ref] = int(ticks)
    digest = hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()
    return GameData(
        MappingProxyType(blocks),
        MappingProxyType(items),
        MappingProxyType(names),
        MappingProxyType(tools),
        MappingProxyType(fuels),
        MappingProxyType(durability),
        MappingProxyType(entities),
        MappingProxyType(special),
        never,
        MappingProxyType(raw["enchanting"]),
        digest,
    )
