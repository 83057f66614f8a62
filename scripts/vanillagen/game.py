"""Game facts that are hard-coded in the real game (not data-pack controlled): data/game/*.json."""

from __future__ import annotations

from typing import Any

from .common import SRC_MCDATA, McData, OutputSet, load_facts, mc, src_facts, src_mixed
from .loot_blocks import LOOT_FACTS

Json = dict[str, Any]
TOOLS_FACTS = "tools.yaml"
FUELS_FACTS = "fuels.yaml"
ENCHANT_FACTS = "enchanting.yaml"
ENTITY_FACTS = "entities.yaml"
SPECIAL_FACTS = "special_recipes.yaml"
EXPERIENCE_FACTS = "experience.yaml"


def _experience(section: str, known: set[str]) -> dict[str, list[int]]:
    """``[min, max]`` experience per block or entity (``vanilla_facts/experience.yaml``)."""
    out: dict[str, list[int]] = {}
    for name, span in load_facts(EXPERIENCE_FACTS)[section].items():
        if name not in known:
            raise ValueError(f"{EXPERIENCE_FACTS}: unknown {section[:-1]} {name!r}")
        low, high = (int(v) for v in span)
        if not 0 <= low <= high:
            raise ValueError(f"{EXPERIENCE_FACTS}: {name}: need 0 <= min <= max, got {span}")
        out[name] = [low, high]
    return out


def default_state(block: Json) -> dict[str, str]:
    """Decode minecraft-data's defaultState: mixed radix over states, the last varying fastest.

    Boolean properties list true before false, as the game does.
    """
    offset = int(block["defaultState"]) - int(block["minStateId"])
    values: dict[str, str] = {}
    for state in reversed(block.get("states") or []):
        n = int(state["num_values"])
        index = offset % n
        offset //= n
        options = state.get("values") or (["true", "false"] if state["type"] == "bool" else [])
        values[state["name"]] = str(options[index]) if options else str(index)
    return dict(sorted(values.items()))


def blocks_json(data: McData, drops_like: dict[str, str]) -> Json:
    no_table = set(load_facts(LOOT_FACTS)["no_loot_table"])
    experience = _experience("blocks", {b["name"] for b in data.blocks_list})
    out: Json = {}
    for b in data.blocks_list:
        name = b["name"]
        loot = None if name in no_table else f"minecraft:blocks/{drops_like.get(name, name)}"
        out[mc(name)] = {
            "display_name": b["displayName"],
            "hardness": b.get("hardness"),
            "requires_tool": bool(b.get("harvestTools")),
            "diggable": bool(b["diggable"]),
            "material": b.get("material"),
            "loot_table": loot,
            "default_state": default_state(b),
        }
        if name in experience:
            out[mc(name)]["experience"] = experience[name]
    return out


def items_json(data: McData) -> Json:
    out: Json = {}
    for it in data.items_list:
        entry: Json = {"stack_size": it["stackSize"], "display_name": it["displayName"]}
        if it.get("maxDurability"):
            entry["durability"] = it["maxDurability"]
        out[mc(it["name"])] = entry
    return out


MINEABLE_TAG_KINDS = ("pickaxe", "axe", "shovel", "hoe")
"""Tool kinds whose blocks the mineable/<kind> tags name; others list theirs in correct_for."""


def _correct_for(data: McData, item: str) -> list[str]:
    """Blocks minecraft-data lists this item as a harvest tool for (swords, shears: cobweb)."""
    item_id = str(data.items[item]["id"])
    return sorted(
        mc(b["name"]) for b in data.blocks_list if item_id in (b.get("harvestTools") or {})
    )


def _wear(facts: Json, kind: str) -> Json:
    wear = facts["wear"][kind]
    return {
        "wear_mine": wear["mine"],
        "wear_hit": wear["hit"],
        "wear_instant_blocks": wear["instant_blocks"],
    }


def tools_json(data: McData) -> Json:
    facts = load_facts(TOOLS_FACTS)
    out: Json = {}
    for prefix, tier in facts["tiers"].items():
        for kind in facts["kinds"]:
            name = f"{prefix}_{kind}"
            base_by_tier = facts["item_base"][kind]
            base = base_by_tier.get("all") or base_by_tier[prefix]
            out[mc(name)] = {
                "kind": kind,
                "tier": tier["tier"],
                "tier_level": tier["tier_level"],
                "speed": facts["sword_speed"] if kind == "sword" else tier["speed"],
                "attack_damage": 1.0 + base["damage"] + tier["attack_bonus"],
                "attack_speed": round(4.0 + base["speed"], 4),
                "durability": data.items[name]["maxDurability"],
                **_wear(facts, kind),
            }
            if kind not in MINEABLE_TAG_KINDS:
                out[mc(name)]["correct_for"] = _correct_for(data, name)
    for name, spec in facts["extra_tools"].items():
        out[mc(name)] = {
            **spec,
            "durability": data.items[name]["maxDurability"],
            **_wear(facts, spec["kind"]),
            "correct_for": _correct_for(data, name),
        }
    return dict(sorted(out.items()))


def fuels_json(data: McData, item_tags: dict[str, list[str]]) -> Json:
    facts = load_facts(FUELS_FACTS)
    burn: Json = {}
    for key, ticks in facts["burn_time"].items():
        ref = mc(key)
        if ref.startswith("#"):
            if ref[len("#minecraft:") :] not in item_tags:
                raise ValueError(f"fuel tag {ref} is not an item tag")
        elif not data.is_item(ref):
            raise ValueError(f"fuel {ref} is not an item")
        burn[ref] = ticks
    return {"burn_time": burn, "never_fuel": [mc(v) for v in facts["never_fuel"]]}


def enchanting_json(data: McData) -> Json:
    facts = load_facts(ENCHANT_FACTS)
    tools = load_facts(TOOLS_FACTS)
    value: dict[str, int] = {}
    materials: dict[str, int] = {}
    for prefix, tier in tools["tiers"].items():
        materials[tier["tier"]] = tier["enchantability"]
        for kind in tools["kinds"]:
            value[f"{prefix}_{kind}"] = tier["enchantability"]
    for material, spec in facts["armor_materials"].items():
        materials[f"{material}_armor"] = spec["enchantability"]
        for piece in facts["armor_pieces"]:
            name = f"{spec['prefix']}_{piece}"
            if name in data.items:  # turtle has only a helmet
                value[name] = spec["enchantability"]
    for name, ench in facts["items"].items():
        materials[name] = ench
        value[name] = ench
    enchantments: Json = {}
    for e in data.enchantments_list:
        enchantments[mc(e["name"])] = {
            "max_level": e["maxLevel"],
            "category": e["category"],
            "weight": e["weight"],
            "treasure_only": e["treasureOnly"],
            "curse": e["curse"],
            "discoverable": e["discoverable"],
            "exclude": [mc(x) for x in e["exclude"]],
            "min_cost": e["minCost"],
            "max_cost": e["maxCost"],
        }
    items: Json = {}
    for name in sorted(value, key=lambda n: int(data.items[n]["id"])):
        cats = set(data.items[name].get("enchantCategories") or [])
        table = {
            mc(e["name"]): e["maxLevel"]
            for e in data.enchantments_list
            if not e["treasureOnly"]
            and e["discoverable"]
            and (name == "book" or e["category"] in cats)
        }
        items[mc(name)] = {"enchantability": value[name], "table_enchantments": table}
    return {"materials": materials, "items": items, "enchantments": enchantments}


def entities_json(data: McData) -> Json:
    facts = load_facts(ENTITY_FACTS)
    out: Json = {}
    for name, health in facts["max_health"].items():
        if name not in data.raw.entities_name:
            raise ValueError(f"entity facts name an unknown entity {name!r}")
        out[mc(name)] = {"max_health": health}
    for name, span in _experience("entities", set(facts["max_health"])).items():
        out[mc(name)]["experience"] = span
    for name, spec in facts["variants"].items():
        weights = spec["weights"]
        if sum(weights.values()) <= 0 or any(w < 0 for w in weights.values()):
            raise ValueError(f"{name}: variant weights must be positive")
        out[mc(name)]["variants"] = {
            "property": spec["property"],
            "loot_table": spec["loot_table"],
            "weights": dict(weights),
        }
    return dict(sorted(out.items()))


def special_recipes_json(data: McData) -> Json:
    """Per special recipe type: its items (namespaced, checked against minecraft-data)."""

    def item(name: str) -> str:
        if not data.is_item(mc(name)):
            raise ValueError(f"{SPECIAL_FACTS}: unknown item {name!r}")
        return mc(name)

    out: Json = {}
    for kind, spec in load_facts(SPECIAL_FACTS).items():
        entry: Json = {}
        for key, value in spec.items():
            if isinstance(value, str):
                entry[key] = item(value)
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                entry[key] = [item(v) for v in value]
            else:
                entry[key] = value
        out[mc(kind)] = dict(sorted(entry.items()))
    return dict(sorted(out.items()))


def write_game(
    data: McData,
    item_tags: dict[str, list[str]],
    drops_like: dict[str, str],
    adv_text: Json,
    out: OutputSet,
) -> None:
    out.add("blocks.json", blocks_json(data, drops_like), src_mixed(LOOT_FACTS, EXPERIENCE_FACTS))
    out.add("items.json", items_json(data), SRC_MCDATA)
    out.add("tools.json", tools_json(data), src_mixed(TOOLS_FACTS))
    out.add("fuels.json", fuels_json(data, item_tags), src_facts(FUELS_FACTS))
    out.add("enchanting.json", enchanting_json(data), src_mixed(ENCHANT_FACTS, TOOLS_FACTS))
    out.add("advancement_text.json", adv_text, SRC_MCDATA)
    out.add("entities.json", entities_json(data), src_facts(ENTITY_FACTS, EXPERIENCE_FACTS))
    out.add("special_recipes.json", special_recipes_json(data), src_facts(SPECIAL_FACTS))
