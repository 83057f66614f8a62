"""Tool durability: which copy of a tool the body uses, and what a use costs it.

Vanilla's rules (``ItemStack.hurt`` and the item classes' ``mineBlock`` / ``hurtEnemy``)
with the per-kind costs from ``data/game/tools.json``: breaking a block costs a digger 1
and a sword 2 when the block's hardness is not 0 (shears pay 1 for any block), a hit on a
mob costs a digger 2 and a sword 1. Each point of wear is skipped with chance
``level / (level + 1)`` under Unbreaking. A tool whose damage reaches its durability
breaks and leaves the inventory. Random draws are keyed by the caller, so twin worlds wear
the same way for the same actions.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from mirrorcraft.body.inventory import Inventory, Key
from mirrorcraft.rules.game import GameData

UNBREAKING = "unbreaking"


def remaining(game: GameData, key: Key) -> int | None:
    """Uses left on a copy of an item; None for items that never wear."""
    top = game.durability.get(key[0])
    return None if top is None else top - key[2]


def unbreaking_level(key: Key) -> int:
    return next((lv for name, lv in key[1] if name == UNBREAKING), 0)


def roll_wear(amount: int, unbreaking: int, rng: random.Random | None) -> int:
    """Points of damage that stick: each is ignored with chance level/(level+1) (non-armour)."""
    if unbreaking <= 0 or amount <= 0 or rng is None:
        return max(amount, 0)
    return sum(1 for _ in range(amount) if rng.randrange(unbreaking + 1) == 0)


@dataclass(frozen=True)
class Worn:
    """What one use did to a tool: its new key (None when it broke)."""

    before: Key
    after: Key | None

    @property
    def broke(self) -> bool:
        return self.after is None


def apply_wear(
    inventory: Inventory, game: GameData, key: Key, amount: int, rng: random.Random | None
) -> Worn:
    """Damage one copy of ``key`` by ``amount`` (before Unbreaking); it breaks at its durability."""
    top = game.durability.get(key[0])
    if top is None or amount <= 0 or inventory.counts.get(key, 0) <= 0:
        return Worn(key, key)
    points = roll_wear(amount, unbreaking_level(key), rng)
    if points == 0:
        return Worn(key, key)
    damage = key[2] + points
    if damage >= top:
        inventory.take(key, 1)
        return Worn(key, None)
    new: Key = (key[0], key[1], damage)
    inventory.put(new, 1)  # before the worn copy is taken: the item never leaves
    inventory.take(key, 1)
    return Worn(key, new)


def copies(inventory: Inventory, item: str) -> list[Key]:
    """Owned copies of an item, the one the body reaches for first at the front.

    Enchanted copies first (as before wear existed), then the most worn, so a tool is
    used up before a fresh one is started. (Sorted once per inventory version.)
    """
    memo = inventory.derived()
    known = memo.get(("copies", item))
    if known is None:
        known = memo[("copies", item)] = sorted(
            (k for k in inventory.counts if k[0] == item),
            key=lambda k: (len(k[1]), k[1], k[2]),
            reverse=True,
        )
    assert isinstance(known, list)
    return list(known)


def survives(game: GameData, key: Key, cost: int) -> bool:
    """Would this copy still exist after a use costing ``cost`` (Unbreaking not counted)?"""
    left = remaining(game, key)
    return left is None or cost <= 0 or left > cost


def durability_entry(
    item: str, remaining: int, top: int, enchantments: Mapping[str, int] | None = None
) -> dict[str, object]:
    """One entry of the observation's ``durability`` list (the schema both backends share)."""
    entry: dict[str, object] = {"item": item, "remaining": remaining, "max": top}
    if enchantments:
        entry["enchantments"] = dict(sorted(enchantments.items()))
    return entry


def durability_order(entry: Mapping[str, object]) -> tuple[str, int, str]:
    """Sort key of ``durability`` entries: item, then uses left, then enchantments."""
    ench = entry.get("enchantments")
    pairs = sorted(ench.items()) if isinstance(ench, dict) else []
    left = entry.get("remaining")
    return (str(entry.get("item")), left if isinstance(left, int) else 0, repr(pairs))


def durability_view(game: GameData, counts: Mapping[Key, int]) -> list[dict[str, object]]:
    """The observation's ``durability`` list: one entry per owned copy of a damageable item.

    Each entry is ``{"item", "remaining", "max"}`` plus ``"enchantments"`` (name -> level)
    when the copy is enchanted; sorted by item, then uses left, then enchantments.
    """
    out: list[dict[str, object]] = []
    for (item, ench, damage), n in counts.items():
        top = game.durability.get(item)
        if top is not None:
            out.extend(durability_entry(item, top - damage, top, dict(ench)) for _ in range(n))
    out.sort(key=durability_order)
    return out
