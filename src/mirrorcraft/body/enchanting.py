"""Enchanting-table draws, following 1.19's EnchantmentHelper.

Slot costs come from the bookshelves around the table (``getEnchantmentCost``);
the chosen slot's level is adjusted by the item's enchantability and a +/-15%
spread, and enchantments whose per-level cost window (``min_cost``/``max_cost``,
``a * level + b``) contains it are drawn by rarity weight, with further picks
while ``nextInt(50) <= level`` (halving the level each time), skipping
incompatible ones. A book keeps all but one of several picks, as vanilla does.
The data (enchantability, applicable enchantments, costs, weights) is in
``mirrorcraft/data/game/enchanting.json``. Random draws are keyed, so twin
worlds draw the same enchantments for the same sequence of actions.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mirrorcraft.rules.game import GameData


@dataclass(frozen=True)
class Offer:
    costs: tuple[int, int, int]
    """Level shown (and required) for the lowest/middle/highest option; 0 = not offered."""


def _items(game: GameData) -> Mapping[str, Any]:
    items: Mapping[str, Any] = game.enchanting.get("items", {})
    return items


def enchantability(game: GameData, item: str) -> int:
    info = _items(game).get(item) or _items(game).get(f"minecraft:{item}")
    return int(info["enchantability"]) if info else 0


def table_enchantments(game: GameData, item: str) -> dict[str, int]:
    info = _items(game).get(item) or _items(game).get(f"minecraft:{item}")
    if not info:
        return {}
    return {
        k.removeprefix("minecraft:"): int(v) for k, v in info.get("table_enchantments", {}).items()
    }


def is_enchantable(game: GameData, item: str) -> bool:
    return enchantability(game, item) > 0 and bool(table_enchantments(game, item))


def slot_costs(rng: random.Random, bookshelves: int, item_enchantability: int) -> Offer:
    if item_enchantability <= 0:
        return Offer((0, 0, 0))
    b = min(bookshelves, 15)
    costs = []
    for slot in range(3):
        i = rng.randrange(8) + 1 + (b >> 1) + rng.randrange(b + 1)
        cost = max(i // 3, 1) if slot == 0 else i * 2 // 3 + 1 if slot == 1 else max(i, b * 2)
        costs.append(cost if cost >= slot + 1 else 0)
    return Offer((costs[0], costs[1], costs[2]))


def _cost(formula: Mapping[str, Any], level: int) -> int:
    return int(formula["a"]) * level + int(formula["b"])


def _available(game: GameData, item: str, level: int) -> list[tuple[str, int, int]]:
    """(enchantment, level, weight) whose cost window at some level contains ``level``."""
    specs: Mapping[str, Any] = game.enchanting.get("enchantments", {})
    out = []
    for name, max_level in sorted(table_enchantments(game, item).items()):
        spec = specs.get(name) or specs.get(f"minecraft:{name}")
        if spec is None:
            continue
        for lvl in range(max_level, 0, -1):
            if _cost(spec["min_cost"], lvl) <= level <= _cost(spec["max_cost"], lvl):
                out.append((name, lvl, int(spec["weight"])))
                break
    return out


def _excluded(game: GameData, a: str, b: str) -> bool:
    specs: Mapping[str, Any] = game.enchanting.get("enchantments", {})

    def excl(x: str) -> set[str]:
        spec = specs.get(x) or specs.get(f"minecraft:{x}") or {}
        return {e.removeprefix("minecraft:") for e in spec.get("exclude", [])}

    return a == b or b in excl(a) or a in excl(b)


def _weighted(rng: random.Random, pool: list[tuple[str, int, int]]) -> tuple[str, int, int]:
    pick = rng.randrange(sum(w for _n, _l, w in pool))
    for entry in pool:
        pick -= entry[2]
        if pick < 0:
            return entry
    return pool[-1]


def select_enchantments(
    game: GameData, item: str, cost: int, rng: random.Random
) -> tuple[tuple[str, int], ...]:
    ench = enchantability(game, item)
    if ench <= 0:
        return ()
    level = cost + 1 + rng.randrange(ench // 4 + 1) + rng.randrange(ench // 4 + 1)
    spread = (rng.random() + rng.random() - 1.0) * 0.15
    level = max(round(level + level * spread), 1)
    pool = _available(game, item, level)
    if not pool:
        return ()
    first = _weighted(rng, pool)
    chosen = [first]
    pool = [p for p in pool if not _excluded(game, p[0], first[0])]
    while pool and rng.randrange(50) <= level:
        nxt = _weighted(rng, pool)
        chosen.append(nxt)
        pool = [p for p in pool if not _excluded(game, p[0], nxt[0])]
        level //= 2
    if item == "book" and len(chosen) > 1:
        chosen.pop(rng.randrange(len(chosen)))
    return tuple((n, lv) for n, lv, _w in chosen)
