"""Deterministic helpers shared by the Voyager, XENON and ADAM configurations.

They read only what the agent itself observes: inventory, facilities, nearby
lists, progress and the results of its own actions. Nothing here consults a
rule set.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from mirrorcraft.agents.llm.history import j
from mirrorcraft.body.observation import Observation
from mirrorcraft.body.results import ActionResult

_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    {"the", "and", "for", "with", "get", "obtain", "any", "one", "story", "minecraft"}
)


def norm(name: Any) -> str:
    """An id in its short form: lower case, no ``minecraft:`` prefix, no padding."""
    text = str(name or "").strip().lower()
    return text.removeprefix("minecraft:")


def action_key(action: Any) -> str:
    return j(action)[:400]


def have(obs: Observation, item: str, count: int = 1) -> bool:
    """Is ``item`` at hand: owned (or worn/held), a placed facility nearby, or a completed advancement?"""
    name = norm(item)
    if not name:
        return False
    if obs.inventory.get(name, 0) >= max(count, 1):
        return True
    if any(norm(v) == name for v in obs.equipped.values() if v):
        return True
    if any(f.id == name for f in obs.facilities):
        return True
    return name in {norm(a) for a in obs.progress.completed_advancements}


def state_json(obs: Observation, nearby: int = 8) -> dict[str, Any]:
    """A compact snapshot of the observable state (for critics and memories)."""
    return {
        "step": obs.step,
        "inventory": dict(sorted(obs.inventory.items())),
        "equipped": {k: v for k, v in sorted(obs.equipped.items()) if v},
        "position": list(obs.position),
        "facilities_nearby": sorted({f.id for f in obs.facilities}),
        "nearby_targets": [n.id for n in obs.nearby_blocks[:nearby]],
        "nearby_entities": [n.id for n in obs.nearby_entities[:nearby]],
        "nearby_drops": [n.id for n in obs.nearby_drops[:nearby]],
        "progress": obs.progress.score,
        "completed_advancements": sorted(norm(a) for a in obs.progress.completed_advancements),
    }


def moved(a: Observation, b: Observation) -> float:
    return math.dist(a.position, b.position)


def tokens(*texts: Any) -> set[str]:
    """Word tokens of ids and phrases (``iron_pickaxe`` -> {iron, pickaxe}), without filler words."""
    out: set[str] = set()
    for text in texts:
        out |= {t for t in _TOKEN.findall(norm(text)) if len(t) >= 3 and t not in _STOP}
    return out


def fuel_of(result: ActionResult) -> dict[str, int]:
    fuel = result.details.get("fuel") if result.skill == "smelt" else None
    if not isinstance(fuel, Mapping):
        return {}
    return {str(k): int(v) for k, v in fuel.items() if isinstance(v, int | float)}


def inputs_of(result: ActionResult) -> dict[str, int]:
    """What an action consumed as ingredients (fuel burnt by a furnace is reported apart)."""
    fuel = fuel_of(result)
    out = {}
    for item, n in sorted(result.consumed.items()):
        left = int(n) - fuel.get(item, 0)
        if left > 0:
            out[item] = left
    return out


def station_of(action: Any) -> str | None:
    if not isinstance(action, Mapping):
        return None
    args = action.get("args") or {}
    if not isinstance(args, Mapping):
        return None
    station = args.get("station")
    if action.get("skill") == "smelt":
        return norm(station or "furnace")
    if action.get("skill") == "craft_grid" and norm(station) == "crafting_table":
        return "crafting_table"
    if action.get("skill") == "enchant":
        return "enchanting_table"
    return None


def items_needed(action: Any) -> dict[str, int]:
    """The owned items an action submits (grid cells, smelt input, placed/equipped/enchanted item)."""
    if not isinstance(action, Mapping):
        return {}
    args = action.get("args") or {}
    if not isinstance(args, Mapping):
        return {}
    skill = action.get("skill")
    need: dict[str, int] = {}
    if skill == "craft_grid" and isinstance(args.get("grid"), list | tuple):
        for row in args["grid"]:
            if isinstance(row, list | tuple):
                for cell in row:
                    if isinstance(cell, str) and cell:
                        need[norm(cell)] = need.get(norm(cell), 0) + 1
    elif skill == "smelt" and args.get("input"):
        count = args.get("count", 1)
        need[norm(args["input"])] = count if isinstance(count, int) and count > 0 else 1
    elif skill in ("place", "equip") and args.get("block" if skill == "place" else "item"):
        need[norm(args.get("block" if skill == "place" else "item"))] = 1
    elif skill == "enchant" and args.get("item"):
        need[norm(args["item"])] = 1
    return need


def action_target(action: Any) -> str | None:
    """The block, creature or drop an action goes to (mine, explore, attack, collect, prepare_access)."""
    if not isinstance(action, Mapping) or not isinstance(action.get("args"), Mapping):
        return None
    args = action["args"]
    for field in ("block", "target", "item"):
        if action.get("skill") in (
            "mine",
            "explore",
            "attack",
            "collect",
            "prepare_access",
        ) and args.get(field):
            return norm(args[field])
    return None


def visible(obs: Observation, name: str) -> bool:
    n = norm(name)
    return any(
        x.id == n
        for x in (*obs.nearby_blocks, *obs.nearby_entities, *obs.nearby_drops, *obs.facilities)
    )
