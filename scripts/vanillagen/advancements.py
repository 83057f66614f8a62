"""Story advancements from vanilla_facts/advancements.yaml (+ English text from minecraft-data)."""

from __future__ import annotations

from typing import Any

from .common import OutputSet, load_facts, mc, src_facts

ADV_FACTS = "advancements.yaml"
Json = dict[str, Any]


def _criterion(spec: dict[str, Any]) -> Json:
    if "items" in spec:
        preds = [
            {"tag": mc(v[1:])} if v.startswith("#") else {"items": [mc(v)]} for v in spec["items"]
        ]
        return {"trigger": "minecraft:inventory_changed", "conditions": {"items": preds}}
    return {"trigger": spec["trigger"], "conditions": spec["conditions"]}


def build_advancements(damageable: set[str]) -> dict[str, Json]:
    """Advancements by name; icons of damageable items carry {Damage:0} NBT as in vanilla."""
    facts = load_facts(ADV_FACTS)
    out: dict[str, Json] = {}
    for name, spec in facts.items():
        key = f"advancements.story.{name}"
        icon: Json = {"item": mc(spec["icon"])}
        if spec["icon"] in damageable:
            icon["nbt"] = "{Damage:0}"
        display: Json = {
            "icon": icon,
            "title": {"translate": f"{key}.title"},
            "description": {"translate": f"{key}.description"},
            "frame": spec["frame"],
            "show_toast": spec.get("show_toast", True),
            "announce_to_chat": spec.get("announce_to_chat", True),
            "hidden": spec.get("hidden", False),
        }
        if "background" in spec:
            display["background"] = spec["background"]
        criteria = {c: _criterion(s) for c, s in spec["criteria"].items()}
        if spec.get("requirements") == "any":
            requirements = [list(criteria)]
        else:
            requirements = [[c] for c in criteria]
        adv: Json = {"display": display, "criteria": criteria, "requirements": requirements}
        if "parent" in spec:
            adv["parent"] = f"minecraft:story/{spec['parent']}"
            if spec["parent"] not in facts:
                raise ValueError(f"advancement {name}: unknown parent {spec['parent']}")
        out[name] = adv
    return out


def english_text(advancements: dict[str, Json], lang: dict[str, str]) -> Json:
    """en_us title/description per advancement id, from minecraft-data's language.json."""
    return {
        f"minecraft:story/{name}": {
            "title": lang[f"advancements.story.{name}.title"],
            "description": lang[f"advancements.story.{name}.description"],
        }
        for name in advancements
    }


def write_advancements(damageable: set[str], out: OutputSet) -> dict[str, Json]:
    advs = build_advancements(damageable)
    for name in sorted(advs):
        out.add(f"data/minecraft/advancements/story/{name}.json", advs[name], src_facts(ADV_FACTS))
    return advs
