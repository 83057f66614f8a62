"""Entity loot tables from vanilla_facts/loot_entities.yaml."""

from __future__ import annotations

from typing import Any

from . import loot_json as L
from .common import OutputSet, load_facts, src_facts

ENTITY_FACTS = "loot_entities.yaml"
Json = dict[str, Any]


def _entry(spec: dict[str, Any]) -> Json:
    functions: list[Json] = []
    if "count" in spec:
        functions.append(L.set_count(L.uniform(*spec["count"])))
    if spec.get("smelt"):
        functions.append({"function": "minecraft:furnace_smelt", "conditions": [L.ON_FIRE]})
    if "looting" in spec:
        functions.append(L.looting(*spec["looting"]))
    return L.item(spec["item"], functions=functions or None)


def _pool(spec: dict[str, Any]) -> Json:
    conditions: list[Json] = []
    if spec.get("killed_by_player"):
        conditions.append(L.KILLED_BY_PLAYER)
    if "chance_with_looting" in spec:
        chance, mult = spec["chance_with_looting"]
        conditions.append(
            {
                "condition": "minecraft:random_chance_with_looting",
                "chance": float(chance),
                "looting_multiplier": float(mult),
            }
        )
    entries = [_entry(e) for e in spec.get("items") or [spec]]
    return L.pool(*entries, conditions=conditions or None)


def build_entity_loot() -> dict[str, Json]:
    facts = load_facts(ENTITY_FACTS)
    tables: dict[str, Json] = {}
    for mob, pools in facts.items():
        if mob == "sheep_colours":
            continue
        tables[mob] = L.table("entity", *(_pool(p) for p in pools))
    for colour in facts["sheep_colours"]:
        ref = {"type": "minecraft:loot_table", "name": "minecraft:entities/sheep"}
        tables[f"sheep/{colour}"] = L.table("entity", L.pool(L.item(f"{colour}_wool")), L.pool(ref))
    return tables


def write_entity_loot(out: OutputSet) -> dict[str, Json]:
    tables = build_entity_loot()
    for name in sorted(tables):
        out.add(
            f"data/minecraft/loot_tables/entities/{name}.json",
            tables[name],
            src_facts(ENTITY_FACTS),
        )
    return tables
