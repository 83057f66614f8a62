"""Resource checks on a generated world: what a task's route consumes against what is there.

``bill_of_materials`` walks a task's witness route backwards from each milestone
and counts the raw items (mined or looted) it uses: recipe ingredients times the
number of crafts, one of each tool and station, one fuel item per eight cooked
items. A mined block is counted as one item, which overstates what blocks with
several drops need and understates rare drops (sticks from leaves); it is an
estimate for the report, and the oracle in the controls is the authority.

``world_supply`` counts, per item, the blocks in a world whose Vanilla loot can
yield it (and the creatures whose loot can), with the nearest horizontal
distance from the spawn.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from mirrorcraft.datapack.routes import Reachability, goal_items
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.rules.recipes import CookingRecipe, ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.ruleset import STATION_COOKING, RuleSet
from mirrorcraft.world.registry import LoadedWorld

ITEMS_PER_FUEL = 8
MAX_DEPTH = 48


def bill_of_materials(rules: RuleSet, reach: Reachability, task: str) -> Counter[str]:
    durable = set(rules.game.tools) | set(STATION_COOKING) | {"crafting_table", "enchanting_table"}
    made: set[str] = set()
    need: Counter[str] = Counter()

    def require(item: str, qty: int, depth: int = 0) -> None:
        t = reach.obtainable.get(item)
        if t is None or depth > MAX_DEPTH or qty <= 0:
            return
        if item in durable:
            if item in made:
                return
            made.add(item)
            qty = 1
        if t.kind in ("mine", "kill"):
            need[item] += qty
            for tool in t.needs:
                require(tool, 1, depth + 1)
            return
        recipe = rules.recipes.get(t.resource[1])
        if isinstance(recipe, ShapedRecipe | ShapelessRecipe):
            crafts = math.ceil(qty / max(recipe.count, 1))
            cells = recipe.cells if isinstance(recipe, ShapedRecipe) else recipe.ingredients
            picks = Counter(
                next((i for i in sorted(c) if i in reach.obtainable), "") for c in cells if c
            )
            for ingredient, n in sorted(picks.items()):
                require(ingredient, n * crafts, depth + 1)
            for extra in t.needs:
                if extra in durable:
                    require(extra, 1, depth + 1)
        elif isinstance(recipe, CookingRecipe) and len(t.needs) == 3:
            source, station, fuel = t.needs
            crafts = math.ceil(qty / max(recipe.count, 1))
            require(source, crafts, depth + 1)
            require(station, 1, depth + 1)
            require(fuel, math.ceil(crafts / ITEMS_PER_FUEL), depth + 1)

    for milestone in get_task(task).milestones:
        enchant, goals = goal_items(rules, milestone.advancement)
        if enchant:
            require("enchanting_table", 1)
            require("lapis_lazuli", 1)
            continue
        goal = next((g for g in goals if g in reach.obtainable), None)
        if goal is not None:
            require(goal, 1)
    return need


@dataclass(frozen=True)
class Supply:
    available: int
    nearest: float | None
    """Horizontal distance from the spawn to the nearest source; None when there is none."""
    sources: tuple[str, ...]


def world_supply(loaded: LoadedWorld, rules: RuleSet, items: set[str]) -> dict[str, Supply]:
    w = loaded.world
    ids, counts = np.unique(w.grid, return_counts=True)
    producers: dict[str, list[tuple[int, str, int]]] = {i: [] for i in items}
    for block_id, count in zip(ids.tolist(), counts.tolist(), strict=True):
        name = w.palette.names[block_id]
        table = rules.block_table(name)
        if table is None:
            continue
        for item in rules.table_outputs(table) & items:
            producers[item].append((block_id, name, count))
    sx, _sy, sz = w.spawn
    out: dict[str, Supply] = {}
    for item in sorted(items):
        total = sum(c for _i, _n, c in producers[item])
        sources = [n for _i, n, _c in producers[item]]
        nearest: float | None = None
        if producers[item]:
            xs, zs, _ys = np.nonzero(np.isin(w.grid, [i for i, _n, _c in producers[item]]))
            nearest = float(np.sqrt(((xs - sx) ** 2 + (zs - sz) ** 2).min()))
        for mob in w.mobs:
            table = rules.entity_table(mob.type)
            if table is not None and item in rules.table_outputs(table):
                total += 1
                if mob.type not in sources:
                    sources.append(mob.type)
                d = math.hypot(mob.pos[0] - sx, mob.pos[2] - sz)
                nearest = d if nearest is None else min(nearest, d)
        out[item] = Supply(total, nearest, tuple(sorted(sources)))
    return out


def exposed_ores(loaded: LoadedWorld) -> int:
    """Ore blocks at or above their column's top block (ores must stay underground)."""
    w = loaded.world
    ore_ids = [i for n, i in w.palette.ids.items() if n.endswith("_ore")]
    xs, zs, ys = np.nonzero(np.isin(w.grid, ore_ids))
    return int(np.count_nonzero(ys + w.min_y >= w.heightmap[xs, zs]))


def cane_by_water(loaded: LoadedWorld) -> int:
    """Sugar cane columns whose lowest block stands next to water (where cane can grow)."""
    w = loaded.world
    cane, water = w.palette.ids.get("sugar_cane"), w.palette.ids.get("water")
    if cane is None or water is None:
        return 0
    g = w.grid
    found = 0
    for x, z, yi in zip(*np.nonzero(g == cane), strict=True):
        if yi == 0 or g[x, z, yi - 1] == cane:
            continue
        near = [(x + 1, z), (x - 1, z), (x, z + 1), (x, z - 1)]
        if any(0 <= a < w.size and 0 <= b < w.size and g[a, b, yi - 1] == water for a, b in near):
            found += 1
    return found
