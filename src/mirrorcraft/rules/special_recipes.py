"""Vanilla's special crafting recipes: engine rules keyed by recipe type.

A recipe file of type ``crafting_special_<x>`` lists no ingredients: the game's code for
that type decides what a grid makes. Here each implemented type is a rule over the grid's
filled cells, reading the items it tests for from the game facts
(``data/game/special_recipes.json``), never from names in this module. A datapack turns
a rule on by carrying a recipe file of its type (the vanilla pack has one of each) and off
by replacing that file. Types without a rule here need items no packaged world provides
(see ``scripts/vanilla_facts/special_recipes.yaml``) and never match.

Item state the simulator does not keep (flight duration, dye colours, banner patterns)
is not modelled: a dyed chestplate is the same chestplate, with its enchantments and wear.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SpecialOutcome:
    item: str
    count: int
    keeps: str | None = None
    """The input item whose copy (enchantments, wear) the result carries on."""
    repair: bool = False
    """The result combines the two input copies' remaining uses (repair_item)."""


Rule = Callable[[Mapping[str, Any], Sequence[str], Mapping[str, int]], SpecialOutcome | None]


def _firework_rocket(
    facts: Mapping[str, Any], items: Sequence[str], _durability: Mapping[str, int]
) -> SpecialOutcome | None:
    low, high = facts["gunpowder_count"]
    paper = sum(1 for i in items if i == facts["paper"])
    powder = sum(1 for i in items if i == facts["gunpowder"])
    extras = set(facts.get("extras", ()))
    others = [i for i in items if i not in (facts["paper"], facts["gunpowder"]) and i not in extras]
    if paper != 1 or not low <= powder <= high or others:
        return None
    return SpecialOutcome(str(facts["result"]), int(facts["count"]))


def _armor_dye(
    facts: Mapping[str, Any], items: Sequence[str], _durability: Mapping[str, int]
) -> SpecialOutcome | None:
    dyeable, dyes = set(facts["dyeable"]), set(facts["dyes"])
    armor = [i for i in items if i in dyeable]
    dyed = [i for i in items if i in dyes]
    if len(armor) != 1 or not dyed or len(armor) + len(dyed) != len(items):
        return None
    return SpecialOutcome(armor[0], 1, keeps=armor[0])


def _repair_item(
    _facts: Mapping[str, Any], items: Sequence[str], durability: Mapping[str, int]
) -> SpecialOutcome | None:
    if len(items) != 2 or items[0] != items[1] or items[0] not in durability:
        return None
    return SpecialOutcome(items[0], 1, repair=True)


def _shield_decoration(
    facts: Mapping[str, Any], items: Sequence[str], _durability: Mapping[str, int]
) -> SpecialOutcome | None:
    shields = [i for i in items if i == facts["shield"]]
    banners = [i for i in items if i in set(facts["banners"])]
    if len(items) != 2 or len(shields) != 1 or len(banners) != 1:
        return None
    return SpecialOutcome(shields[0], 1, keeps=shields[0])


ENGINE_RULES: Mapping[str, Rule] = {
    "crafting_special_firework_rocket": _firework_rocket,
    "crafting_special_armordye": _armor_dye,
    "crafting_special_repairitem": _repair_item,
    "crafting_special_shielddecoration": _shield_decoration,
}
"""Recipe type -> its rule (the types reachable with what the worlds provide, and rockets)."""


def repaired_damage(top: int, remaining: Sequence[int], bonus_percent: int) -> int:
    """Damage of a repair_item result: both copies' uses left plus a bonus (vanilla's sum)."""
    left = sum(remaining) + top * bonus_percent // 100
    return max(top - left, 0)


@dataclass(frozen=True)
class SpecialRecipeSet:
    """The special recipes a rule set carries, each bound to its engine rule and facts."""

    recipes: tuple[tuple[str, str], ...]
    """(location, type), sorted by location; only types with an engine rule."""
    facts: Mapping[str, Mapping[str, Any]]
    durability: Mapping[str, int]

    def match(self, items: Sequence[str], before: str | None) -> tuple[str, SpecialOutcome] | None:
        """The first special recipe (by location, below ``before``) the filled cells make."""
        for location, kind in self.recipes:
            if before is not None and location >= before:
                break
            outcome = ENGINE_RULES[kind](self.facts.get(kind, {}), items, self.durability)
            if outcome is not None:
                return location, outcome
        return None
