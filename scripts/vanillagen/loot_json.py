"""Small builders for vanilla 1.19 loot table JSON (conditions, functions, entries, pools)."""

from __future__ import annotations

from typing import Any

from .common import mc

Json = dict[str, Any]

SURVIVES_EXPLOSION: Json = {"condition": "minecraft:survives_explosion"}
EXPLOSION_DECAY: Json = {"function": "minecraft:explosion_decay"}
HAS_SILK_TOUCH: Json = {
    "condition": "minecraft:match_tool",
    "predicate": {"enchantments": [{"enchantment": "minecraft:silk_touch", "levels": {"min": 1}}]},
}
HAS_SHEARS: Json = {
    "condition": "minecraft:match_tool",
    "predicate": {"items": ["minecraft:shears"]},
}
HAS_SHEARS_OR_SILK_TOUCH: Json = {
    "condition": "minecraft:alternative",
    "terms": [HAS_SHEARS, HAS_SILK_TOUCH],
}
KILLED_BY_PLAYER: Json = {"condition": "minecraft:killed_by_player"}
ON_FIRE: Json = {
    "condition": "minecraft:entity_properties",
    "entity": "this",
    "predicate": {"flags": {"is_on_fire": True}},
}


def inverted(term: Json) -> Json:
    return {"condition": "minecraft:inverted", "term": term}


def table_bonus(chances: list[float]) -> Json:
    return {
        "condition": "minecraft:table_bonus",
        "enchantment": "minecraft:fortune",
        "chances": [float(c) for c in chances],
    }


def random_chance(chance: float) -> Json:
    return {"condition": "minecraft:random_chance", "chance": float(chance)}


def state_is(block: str, **props: str) -> Json:
    return {
        "condition": "minecraft:block_state_property",
        "block": mc(block),
        "properties": dict(props),
    }


def uniform(lo: float, hi: float) -> Json:
    return {"type": "minecraft:uniform", "min": float(lo), "max": float(hi)}


def binomial(n: int, p: float) -> Json:
    return {"type": "minecraft:binomial", "n": float(n), "p": float(p)}


def set_count(count: Any, add: bool = False, conditions: list[Json] | None = None) -> Json:
    fn: Json = {
        "function": "minecraft:set_count",
        "count": float(count) if isinstance(count, int | float) else count,
        "add": add,
    }
    if conditions:
        fn["conditions"] = conditions
    return fn


def ore_bonus() -> Json:
    return {
        "function": "minecraft:apply_bonus",
        "enchantment": "minecraft:fortune",
        "formula": "minecraft:ore_drops",
    }


def uniform_bonus(multiplier: int = 1, conditions: list[Json] | None = None) -> Json:
    fn: Json = {
        "function": "minecraft:apply_bonus",
        "enchantment": "minecraft:fortune",
        "formula": "minecraft:uniform_bonus_count",
        "parameters": {"bonusMultiplier": multiplier},
    }
    if conditions:
        fn["conditions"] = conditions
    return fn


def binomial_bonus(extra: int, probability: float) -> Json:
    return {
        "function": "minecraft:apply_bonus",
        "enchantment": "minecraft:fortune",
        "formula": "minecraft:binomial_with_bonus_count",
        "parameters": {"extra": extra, "probability": float(probability)},
    }


def limit_count(limit: dict[str, float]) -> Json:
    return {"function": "minecraft:limit_count", "limit": {k: float(v) for k, v in limit.items()}}


def looting(lo: float = 0.0, hi: float = 1.0) -> Json:
    return {"function": "minecraft:looting_enchant", "count": uniform(lo, hi)}


def item(
    name: str, conditions: list[Json] | None = None, functions: list[Json] | None = None
) -> Json:
    entry: Json = {"type": "minecraft:item", "name": mc(name)}
    if conditions:
        entry["conditions"] = conditions
    if functions:
        entry["functions"] = functions
    return entry


def alternatives(*children: Json, conditions: list[Json] | None = None) -> Json:
    entry: Json = {"type": "minecraft:alternatives", "children": list(children)}
    if conditions:
        entry["conditions"] = conditions
    return entry


def pool(
    *entries: Json, conditions: list[Json] | None = None, functions: list[Json] | None = None
) -> Json:
    p: Json = {"rolls": 1.0, "bonus_rolls": 0.0, "entries": list(entries)}
    if conditions:
        p["conditions"] = conditions
    if functions:
        p["functions"] = functions
    return p


def table(kind: str, *pools: Json, functions: list[Json] | None = None) -> Json:
    t: Json = {"type": f"minecraft:{kind}", "pools": list(pools)}
    if functions:
        t["functions"] = functions
    return t


def block_table(*pools: Json, functions: list[Json] | None = None) -> Json:
    return table("block", *pools, functions=functions)


def self_drop(name: str) -> Json:
    """dropSelf / dropOther / createSingleItemTable: one item, pool survives_explosion."""
    return block_table(pool(item(name), conditions=[SURVIVES_EXPLOSION]))


def silk_dispatch(block: str, otherwise: Json) -> Json:
    """createSilkTouchDispatchTable: silk touch -> the block itself, else `otherwise`."""
    return block_table(pool(alternatives(item(block, [HAS_SILK_TOUCH]), otherwise)))
