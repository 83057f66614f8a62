"""Recipe files: named crafting recipes, cooking recipes and special recipes."""

from __future__ import annotations

from typing import Any

from .common import SRC_MCDATA, SRC_MCDATA_REGROUPED, McData, OutputSet, load_facts, mc, src_facts
from .crafting import RECIPE_FACTS, Crafting, regroup_all
from .tags import Tags

COOKING_FACTS = "cooking.yaml"
RECIPE_DIR = "data/minecraft/recipes"


def _name_rules(facts: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per result item: naming entries (explicit names plus expanded families)."""
    rules: dict[str, list[dict[str, Any]]] = {k: list(v) for k, v in facts["names"].items()}
    for fam in facts.get("name_families") or []:
        for v in fam["vars"]:
            item = fam["item"].format(v=v)
            if item in rules:
                raise ValueError(f"recipe names for {item} given twice")
            rules[item] = [
                {
                    "name": e["name"].format(v=v),
                    "match": [m.format(v=v) for m in e.get("match") or []],
                    "unless": [m.format(v=v) for m in e.get("unless") or []],
                }
                for e in fam["recipes"]
            ]
    return rules


def _matches(entry: dict[str, Any], recipe: Crafting) -> bool:
    return all(m in recipe.tokens for m in entry.get("match") or []) and not any(
        u in recipe.tokens for u in entry.get("unless") or []
    )


def name_crafting(recipes: dict[str, list[Crafting]], facts: dict[str, Any]) -> dict[str, Crafting]:
    """Recipe name -> recipe, using the names table for ambiguous and renamed items."""
    rules = _name_rules(facts)
    missing = sorted(set(rules) - set(recipes))
    if missing:
        raise ValueError(f"recipe names given for items without recipes: {missing}")
    named: dict[str, Crafting] = {}
    for item, item_recipes in recipes.items():
        if item not in rules:
            if len(item_recipes) != 1:
                raise ValueError(
                    f"{item} has {len(item_recipes)} recipes; add names in recipes.yaml"
                )
            named[item] = item_recipes[0]
            continue
        entries = rules[item]
        if len(entries) != len(item_recipes):
            raise ValueError(f"{item}: {len(item_recipes)} recipes but {len(entries)} names")
        for recipe in item_recipes:
            hits = [e for e in entries if _matches(e, recipe)]
            if len(hits) != 1:
                raise ValueError(f"{item}: recipe {sorted(recipe.tokens)} matches {hits}")
            if hits[0]["name"] in named:
                raise ValueError(f"recipe name {hits[0]['name']} used twice")
            named[hits[0]["name"]] = recipe
    return named


def _groups(facts: dict[str, Any], names: set[str]) -> dict[str, str]:
    groups: dict[str, str] = {}
    for group, members in (facts.get("groups") or {}).items():
        for name in members:
            groups[name] = group
    for fam in facts.get("group_suffixes") or []:
        for prefix in fam["prefixes"]:
            for suffix, group in fam["suffixes"].items():
                groups.setdefault(prefix + suffix, group)
    listed = [name for members in (facts.get("groups") or {}).values() for name in members]
    unknown = sorted(name for name in listed if name not in names)
    if unknown:
        raise ValueError(f"groups name unknown recipes: {unknown}")
    return groups


def _ingredient(value: str) -> dict[str, str]:
    return {"tag": mc(value[1:])} if value.startswith("#") else {"item": mc(value)}


def _cook(kind: str, ingredient: Any, result: str, xp: float, time: int, group: str | None) -> Any:
    obj: dict[str, Any] = {
        "type": f"minecraft:{kind}",
        "ingredient": ingredient,
        "result": mc(result),
        "experience": float(xp),
        "cookingtime": time,
    }
    if group:
        obj["group"] = group
    return obj


def cooking_recipes() -> dict[str, Any]:
    """All cooking recipes from the facts table, name -> JSON."""
    facts = load_facts(COOKING_FACTS)
    time = facts["cooking_time"]
    out: dict[str, Any] = {}

    def add(name: str, obj: Any) -> None:
        if name in out:
            raise ValueError(f"cooking recipe {name} twice")
        out[name] = obj

    for ore in facts["ores"]:
        for src in ore["inputs"]:
            for kind in ("smelting", "blasting"):
                add(
                    f"{ore['result']}_from_{kind}_{src}",
                    _cook(
                        kind,
                        _ingredient(src),
                        ore["result"],
                        ore["experience"],
                        time[kind],
                        ore["group"],
                    ),
                )
    for food in facts["food"]:
        ing = _ingredient(food["input"])
        res, xp = food["result"], food["experience"]
        add(food.get("smelting_name", res), _cook("smelting", ing, res, xp, time["smelting"], None))
        add(f"{res}_from_smoking", _cook("smoking", ing, res, xp, time["smoking"], None))
        add(
            f"{res}_from_campfire_cooking",
            _cook("campfire_cooking", ing, res, xp, time["campfire_cooking"], None),
        )
    for nug in facts["nuggets"]:
        items = [{"item": mc(i)} for i in nug["inputs"]]
        for kind in ("smelting", "blasting"):
            add(
                f"{nug['result']}_from_{kind}",
                _cook(kind, items, nug["result"], nug["experience"], time[kind], None),
            )
    for one in facts["single"]:
        kind = one.get("type", "smelting")
        add(
            one["name"],
            _cook(
                kind, _ingredient(one["input"]), one["result"], one["experience"], time[kind], None
            ),
        )
    glazed = facts["glazed_terracotta"]
    for colour in glazed["colours"]:
        res = f"{colour}_glazed_terracotta"
        add(
            res,
            _cook(
                "smelting",
                _ingredient(f"{colour}_terracotta"),
                res,
                glazed["experience"],
                time["smelting"],
                None,
            ),
        )
    return out


def write_recipes(data: McData, tags: Tags, out: OutputSet) -> dict[str, Any]:
    """Write every recipe file; returns name -> JSON for later checks."""
    facts = load_facts(RECIPE_FACTS)
    crafting = name_crafting(regroup_all(data, tags), facts)
    cooking = cooking_recipes()
    special = facts["special_recipes"]
    groups = _groups(facts, set(crafting))
    everything: dict[str, Any] = {}
    for name, recipe in crafting.items():
        everything[name] = recipe.to_json(groups.get(name))
        source = SRC_MCDATA_REGROUPED if recipe.grouped else SRC_MCDATA
        out.add(f"{RECIPE_DIR}/{name}.json", everything[name], source)
    for name, obj in cooking.items():
        if name in everything:
            raise ValueError(f"cooking recipe {name} clashes with a crafting recipe")
        everything[name] = obj
        out.add(f"{RECIPE_DIR}/{name}.json", obj, src_facts(COOKING_FACTS))
    for name, kind in special.items():
        if name in everything:
            raise ValueError(f"special recipe {name} clashes with another recipe")
        everything[name] = {"type": kind}
        out.add(f"{RECIPE_DIR}/{name}.json", everything[name], src_facts(RECIPE_FACTS))
    return everything
