"""Between the bridge and the embedded schema: the ``configure`` payload (skills, body bounds,
names, fuel facts) and the conversion of bridge observations and results into the same
``Observation`` and ``ActionResult`` the embedded backend produces."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mirrorcraft.body.actions import skill_specs
from mirrorcraft.body.config import BodyConfig
from mirrorcraft.body.observation import Budget, Nearby, Observation, ProgressView
from mirrorcraft.body.results import REASONS, ActionResult
from mirrorcraft.body.wear import durability_entry, durability_order
from mirrorcraft.datapack.server_form import MARKERS
from mirrorcraft.faults import InfrastructureFault
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.worldgen.compiler import WORLD_BORDER

RESULT_KEYS = (
    "skill",
    "args",
    "ok",
    "reason",
    "message",
    "produced",
    "consumed",
    "inventory_delta",
    "details",
)


def _expand(rules: RuleSet, ref: str) -> list[str]:
    if ref.startswith("#"):
        tag = ref[1:].removeprefix("minecraft:")
        names = rules.block_tags.get(tag, frozenset()) | rules.item_tags.get(tag, frozenset())
        return sorted(names)
    return [ref]


HARVEST_TAGS = (
    "mineable/pickaxe",
    "mineable/axe",
    "mineable/shovel",
    "mineable/hoe",
    "needs_stone_tool",
    "needs_iron_tool",
    "needs_diamond_tool",
)
"""The block tags that decide which tool harvests a block and how fast it digs."""


def harvest_config(active: RuleSet) -> dict[str, Any]:
    """What decides harvesting in ``active`` (the episode's rules): its harvest tags, the blocks
    that need a tool at all, and the tools' kinds, tiers and speeds (game facts)."""
    return {
        "requires_tool": sorted(b for b, info in active.game.blocks.items() if info.requires_tool),
        "tags": {tag: sorted(active.block_tags.get(tag, frozenset())) for tag in HARVEST_TAGS},
        "tools": {
            name: {
                "kind": t.kind,
                "tier_level": t.tier_level,
                "speed": t.speed,
                "correct_for": sorted(t.correct_for),
            }
            for name, t in sorted(active.game.tools.items())
        },
    }


def bridge_config(
    config: BodyConfig,
    vanilla: RuleSet,
    limits: Mapping[str, float] | None = None,
    *,
    active: RuleSet | None = None,
) -> dict[str, Any]:
    """The ``configure`` request: everything the bridge enforces comes from the same files as the embedded body.

    Names are expanded with vanilla tags (the body's generic names); fuel burn times are
    game facts (``data/game``), not datapack rules. Harvesting and dig times follow the
    episode's ``active`` rules (default: ``vanilla``), whose block tags a suite may edit.
    """
    skills = {
        name: {
            "args": [
                {
                    "name": a.name,
                    "type": a.type,
                    "required": a.required,
                    "default": a.default,
                    "min": a.min,
                    "max": a.max,
                    "choices": list(a.choices),
                }
                for a in spec.args
            ]
        }
        for name, spec in skill_specs().items()
    }
    observable: list[str] = []
    for ref in config.observable_blocks:
        for name in _expand(vanilla, ref):
            if name not in observable and name in vanilla.game.blocks:
                observable.append(name)
    fuel_order: list[str] = []
    for pref in config.fuel_preference:
        fuel_order += [n for n in _expand(vanilla, pref) if n not in fuel_order]
    fuel_ticks = {item: vanilla.fuel_ticks(item) for item in sorted(vanilla.game.items)}
    half = WORLD_BORDER // 2
    return {
        "skills": skills,
        "body": {
            "mine_radius": config.mine_radius,
            "observe_radius": config.observe_radius,
            "drop_radius": config.drop_radius,
            "station_radius": config.station_radius,
            "reach": config.reach,
            "explore_radius": config.explore_radius,
            "explore_hops": config.explore_hops,
            "region_size": config.region_size,
            "max_path_digs": config.max_path_digs,
            "aliases": {k: _expand(vanilla, v) for k, v in config.aliases.items()},
            "disposable_blocks": list(config.disposable_blocks),
            "facilities": list(config.facilities),
            "observable_blocks": observable,
        },
        "world_bounds": {"min_x": -half, "max_x": half - 1, "min_z": -half, "max_z": half - 1},
        "fuel_ticks": {k: v for k, v in fuel_ticks.items() if v > 0},
        "fuel_order": fuel_order,
        "tools": sorted(vanilla.game.tools),
        "harvest": harvest_config(active or vanilla),
        "markers": list(MARKERS),
        "limits": dict(limits or {}),
    }


def _round(d2: float) -> float:
    return round(math.sqrt(d2), 1)


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InfrastructureFault(f"the bridge sent a malformed observation ({what}: {value!r})")
    return int(value)


def build_observation(
    raw: Any,
    *,
    step: int,
    biome: str,
    facilities: tuple[str, ...],
    progress: ProgressView,
    budget: Budget,
    last: ActionResult | None,
) -> Observation:
    """The embedded schema from the bridge's raw state (grouping and rounding as the embedded body)."""
    if not isinstance(raw, dict):
        raise InfrastructureFault("the bridge sent a malformed observation (not an object)")
    try:
        inventory = {
            str(k): _int(v, "inventory") for k, v in sorted(dict(raw["inventory"]).items())
        }
        blocks = [
            Nearby(str(b["block"]), _round(_int(b["d2"], "block distance"))) for b in raw["blocks"]
        ]
        blocks.sort(key=lambda n: (n.distance, n.id))
        drop_d2: dict[str, int] = {}
        drop_count: dict[str, int] = {}
        for d in raw["drops"]:
            item, d2 = str(d["item"]), _int(d["d2"], "drop distance")
            drop_d2[item] = min(drop_d2.get(item, d2), d2)
            drop_count[item] = drop_count.get(item, 0) + _int(d["count"], "drop count")
        ent_d2: dict[str, list[int]] = {}
        for e in raw["entities"]:
            ent_d2.setdefault(str(e["type"]), []).append(_int(e["d2"], "entity distance"))
        pos = raw["position"]
        equipped = {
            slot: raw["equipped"].get(slot) for slot in ("hand", "head", "chest", "legs", "feet")
        }
        enchanted = [
            {
                "item": str(e["item"]),
                "count": _int(e["count"], "count"),
                "enchantments": dict(e["enchantments"]),
            }
            for e in raw["enchanted_items"]
        ]
        # Optional for bridges that do not report wear yet (then the list is empty).
        durability = sorted(
            (
                durability_entry(
                    str(d["item"]),
                    _int(d["remaining"], "durability remaining"),
                    _int(d["max"], "durability max"),
                    {
                        str(k): _int(v, "enchantment level")
                        for k, v in dict(d.get("enchantments") or {}).items()
                    },
                )
                for d in raw.get("durability") or []
            ),
            key=durability_order,
        )
        return Observation(
            step=step,
            inventory=inventory,
            enchanted_items=enchanted,
            equipped=equipped,
            position=(_int(pos[0], "x"), _int(pos[1], "y"), _int(pos[2], "z")),
            biome=biome,
            health=float(raw["health"]),
            food=_int(raw["food"], "food"),
            alive=bool(raw["alive"]),
            experience_level=_int(raw["experience_level"], "level"),
            progress=progress,
            nearby_blocks=blocks,
            nearby_drops=sorted(
                (Nearby(i, _round(d2), drop_count[i]) for i, d2 in drop_d2.items()),
                key=lambda n: (n.distance, n.id),
            ),
            nearby_entities=sorted(
                (Nearby(t, _round(min(ds)), len(ds)) for t, ds in ent_d2.items()),
                key=lambda n: (n.distance, n.id),
            ),
            facilities=[n for n in blocks if n.id in facilities],
            last_result=last,
            budget=budget,
            skills=list(skill_specs()),
            durability=durability,
        )
    except (KeyError, TypeError, IndexError, ValueError, AttributeError) as exc:
        raise InfrastructureFault(f"the bridge sent a malformed observation: {exc!r}") from None


def _counts(value: Any, what: str) -> dict[str, int]:
    if not isinstance(value, dict):
        raise InfrastructureFault(f"the bridge sent a malformed result ({what} is not an object)")
    return {str(k): _int(v, what) for k, v in sorted(value.items())}


def build_result(raw: Any, args: Mapping[str, Any]) -> ActionResult:
    """An ``ActionResult`` from the bridge's answer; the args are the validated ones we sent."""
    if not isinstance(raw, dict) or any(k not in raw for k in RESULT_KEYS):
        raise InfrastructureFault(f"the bridge sent a malformed result: {str(raw)[:200]}")
    reason = str(raw["reason"])
    if raw["ok"] is not True and reason not in REASONS:
        raise InfrastructureFault(f"the bridge reported an unknown failure reason {reason!r}")
    details = raw["details"] if isinstance(raw["details"], dict) else {}
    return ActionResult(
        skill=str(raw["skill"]),
        args=dict(args),
        ok=raw["ok"] is True,
        reason="" if raw["ok"] is True else reason,
        message=str(raw["message"])[:500],
        produced=_counts(raw["produced"], "produced"),
        consumed=_counts(raw["consumed"], "consumed"),
        inventory_delta=_counts(raw["inventory_delta"], "inventory_delta"),
        details={k: v for k, v in sorted(details.items())},
    )
