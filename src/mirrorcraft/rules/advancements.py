"""Advancements: criteria with the 1.19 triggers the semantic skills can fire."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.predicates import (
    ANY_BOUNDS,
    Bounds,
    ItemPredicate,
    parse_bounds,
    parse_item_predicate,
)

SUPPORTED_TRIGGERS = ("inventory_changed", "enchanted_item", "impossible")
UNSIMULATED_TRIGGERS = frozenset(
    [
        "player_killed_entity",
        "entity_killed_player",
        "enter_block",
        "recipe_unlocked",
        "player_hurt_entity",
        "entity_hurt_player",
        "filled_bucket",
        "brewed_potion",
        "construct_beacon",
        "used_ender_eye",
        "summoned_entity",
        "bred_animals",
        "location",
        "slept_in_bed",
        "cured_zombie_villager",
        "villager_trade",
        "item_durability_changed",
        "levitation",
        "changed_dimension",
        "tick",
        "tame_animal",
        "placed_block",
        "consume_item",
        "effects_changed",
        "used_totem",
        "nether_travel",
        "fishing_rod_hooked",
        "channeled_lightning",
        "shot_crossbow",
        "killed_by_crossbow",
        "hero_of_the_village",
        "voluntary_exile",
        "slide_down_block",
        "bee_nest_destroyed",
        "target_hit",
        "item_used_on_block",
        "player_generates_container_loot",
        "thrown_item_picked_up_by_entity",
        "thrown_item_picked_up_by_player",
        "player_interacted_with_entity",
        "started_riding",
        "lightning_strike",
        "using_item",
        "fall_from_height",
        "ride_entity_in_lava",
        "kill_mob_near_sculk_catalyst",
        "allay_drop_item_on_block",
        "avoid_vibration",
    ]
)
"""1.19 triggers for events the semantic skills never cause; such criteria load but never fire."""


@dataclass(frozen=True)
class SlotConditions:
    occupied: Bounds = ANY_BOUNDS
    full: Bounds = ANY_BOUNDS
    empty: Bounds = ANY_BOUNDS


@dataclass(frozen=True)
class Criterion:
    name: str
    trigger: str
    items: tuple[ItemPredicate, ...] = ()
    slots: SlotConditions = SlotConditions()
    levels: Bounds = ANY_BOUNDS


@dataclass(frozen=True)
class Advancement:
    id: str  # e.g. "story/mine_stone" (bare for the minecraft namespace)
    parent: str | None
    title: str
    description: str
    criteria: Mapping[str, Criterion]
    requirements: tuple[tuple[str, ...], ...]

    def is_done(self, met: Iterable[str]) -> bool:
        have = set(met)
        return all(any(c in have for c in group) for group in self.requirements)


@dataclass(frozen=True)
class InventoryView:
    """An inventory as slots see it: stacks split by stack size, 36 main slots."""

    stacks: tuple[ItemStack, ...]
    slot_count: int = 36

    def slot_numbers(self, stack_sizes: Mapping[str, int]) -> tuple[int, int, int]:
        occupied = len(self.stacks)
        full = sum(1 for s in self.stacks if s.count >= stack_sizes.get(s.item, 64))
        return occupied, full, max(self.slot_count - occupied, 0)


def _text(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict):
        return str(raw.get("text") or raw.get("translate") or "")
    return ""


class AdvancementParser:
    def __init__(self, item_tags: Mapping[str, frozenset[str]], known_items: frozenset[str]):
        self.item_tags = item_tags
        self.known_items = known_items

    def parse(self, location: str, doc: Mapping[str, Any]) -> Advancement:
        criteria_raw = doc.get("criteria")
        if not isinstance(criteria_raw, dict) or not criteria_raw:
            raise DatapackError("must be a non-empty object", field="criteria")
        criteria = {
            name: self._criterion(name, raw, f"criteria.{name}")
            for name, raw in criteria_raw.items()
        }
        req_raw = doc.get("requirements")
        if req_raw is None:
            requirements = tuple((name,) for name in sorted(criteria))
        else:
            if not isinstance(req_raw, list) or not all(isinstance(g, list) for g in req_raw):
                raise DatapackError(
                    "must be a list of lists of criterion names", field="requirements"
                )
            for group in req_raw:
                for name in group:
                    if not isinstance(name, str) or name not in criteria:
                        raise DatapackError(
                            f"names unknown criterion {name!r}", field="requirements"
                        )
            requirements = tuple(tuple(group) for group in req_raw)
        display_raw = doc.get("display")
        display: Mapping[str, Any] = display_raw if isinstance(display_raw, dict) else {}
        parent_raw = doc.get("parent")
        parent = None
        if parent_raw is not None:
            try:
                parent = normalize_id(parent_raw)
            except ValueError as exc:
                raise DatapackError(str(exc), field="parent") from None
        return Advancement(
            id=normalize_id(location),
            parent=parent,
            title=_text(display.get("title")),
            description=_text(display.get("description")),
            criteria=criteria,
            requirements=requirements,
        )

    def _criterion(self, name: str, raw: Any, field: str) -> Criterion:
        if not isinstance(raw, dict) or not isinstance(raw.get("trigger"), str):
            raise DatapackError("a criterion needs a 'trigger'", field=field)
        trigger = normalize_id(raw["trigger"])
        if trigger in UNSIMULATED_TRIGGERS:
            return Criterion(name, trigger)
        if trigger not in SUPPORTED_TRIGGERS:
            raise DatapackError(
                f"trigger {raw['trigger']!r} is not a 1.19 trigger the simulator knows (simulated: "
                + ", ".join(SUPPORTED_TRIGGERS)
                + ")",
                field=f"{field}.trigger",
            )
        cond = raw.get("conditions", {})
        if not isinstance(cond, dict):
            raise DatapackError("must be an object", field=f"{field}.conditions")
        if "player" in cond:
            raise DatapackError(
                "player predicates are not simulated", field=f"{field}.conditions.player"
            )
        if trigger == "inventory_changed":
            items_raw = cond.get("items", [])
            if not isinstance(items_raw, list):
                raise DatapackError("must be a list", field=f"{field}.conditions.items")
            items = tuple(
                parse_item_predicate(
                    p, f"{field}.conditions.items[{i}]", self.item_tags, self.known_items
                )
                for i, p in enumerate(items_raw)
            )
            slots_raw = cond.get("slots", {})
            slots = SlotConditions(
                *(
                    parse_bounds(slots_raw.get(k), f"{field}.conditions.slots.{k}")
                    for k in ("occupied", "full", "empty")
                )
            )
            return Criterion(name, trigger, items=items, slots=slots)
        if trigger == "enchanted_item":
            item = cond.get("item")
            items = (
                ()
                if item is None
                else (
                    parse_item_predicate(
                        item, f"{field}.conditions.item", self.item_tags, self.known_items
                    ),
                )
            )
            return Criterion(
                name,
                trigger,
                items=items,
                levels=parse_bounds(cond.get("levels"), f"{field}.conditions.levels"),
            )
        return Criterion(name, trigger)


def inventory_changed_fires(
    crit: Criterion, view: InventoryView, changed: ItemStack, stack_sizes: Mapping[str, int]
) -> bool:
    """InventoryChangeTrigger: slot counts, then one predicate vs the changed stack, or all vs slots."""
    s = crit.slots
    if not (s.occupied.is_any and s.full.is_any and s.empty.is_any):
        occupied, full, empty = view.slot_numbers(stack_sizes)
        if not (s.occupied.matches(occupied) and s.full.matches(full) and s.empty.matches(empty)):
            return False
    if not crit.items:
        return True
    if len(crit.items) == 1:
        return changed.count > 0 and crit.items[0].matches(changed)
    remaining = list(crit.items)
    for stack in view.stacks:
        remaining = [p for p in remaining if not p.matches(stack)]
        if not remaining:
            return True
    return False


def enchanted_item_fires(crit: Criterion, item: ItemStack, levels: int) -> bool:
    return all(p.matches(item) for p in crit.items) and crit.levels.matches(levels)


def newly_met(
    advancements: Sequence[Advancement], met: Mapping[str, frozenset[str]], fires: Any
) -> dict[str, frozenset[str]]:
    """Criteria met now, per advancement, given ``fires(criterion) -> bool``; adds to ``met``."""
    out: dict[str, frozenset[str]] = {}
    for adv in advancements:
        have = met.get(adv.id, frozenset())
        new = {name for name, crit in adv.criteria.items() if name not in have and fires(crit)}
        if new:
            out[adv.id] = have | new
    return out
