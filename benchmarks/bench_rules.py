"""Rules-engine throughput: crafting-grid matches and loot rolls per second, on one core.

Run: .venv/bin/python benchmarks/bench_rules.py
"""

from __future__ import annotations

import argparse
import random
import time

from mirrorcraft.rules.crafting import CraftingMatcher
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot_context import EntityState, LootContext
from mirrorcraft.rules.recipes import ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.ruleset import RuleSet


def rate(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn(n)
    return n / (time.perf_counter() - start)


def main() -> None:
    t0 = time.perf_counter()
    rs = RuleSet.load()
    print(
        f"load vanilla RuleSet: {time.perf_counter() - t0:.3f} s ({len(rs.recipes)} recipes, {len(rs.loot_tables)} loot tables)"
    )
    rng = random.Random(0)
    items = sorted(
        {
            i
            for r in rs.recipes.values()
            if isinstance(r, ShapedRecipe)
            for c in r.cells
            if c
            for i in c
        }
    )
    # A realistic mix: real recipe grids (some mirrored/shifted) and random junk grids.
    grids = []
    for r in rs.recipes.values():
        if isinstance(r, ShapedRecipe):
            cells = [sorted(c)[0] if c else None for c in r.cells]
            rows = [
                cells[i * r.width : (i + 1) * r.width] + [None] * (3 - r.width)
                for i in range(r.height)
            ]
            rows += [[None, None, None]] * (3 - r.height)
            grids.append(tuple(tuple(row) for row in rows))
    for _ in range(len(grids)):
        grids.append(
            tuple(tuple(rng.choice([None, None, *items[:60]]) for _ in range(3)) for _ in range(3))
        )
    rng.shuffle(grids)
    shaped = [r for r in rs.recipes.values() if isinstance(r, ShapedRecipe)]
    shapeless = [r for r in rs.recipes.values() if isinstance(r, ShapelessRecipe)]

    def uncached(n: int) -> None:
        m = CraftingMatcher(shaped, shapeless)
        for i in range(n):
            m._cache.clear()  # measure the index lookup and verification, not the memo
            m.match(grids[i % len(grids)], "crafting_table")

    def cached(n: int) -> None:
        for i in range(n):
            rs.craft(grids[i % len(grids)], "crafting_table")

    print(f"grid matches per second (no memo):   {rate(uncached, 60_000):>10,.0f}")
    print(f"grid matches per second (with memo): {rate(cached, 200_000):>10,.0f}")

    tables = [
        (rs.block_table(b), LootContext(tool=ItemStack("iron_pickaxe"), block=b))
        for b in (
            "stone",
            "iron_ore",
            "lapis_ore",
            "diamond_ore",
            "oak_log",
            "oak_leaves",
            "gravel",
            "sugar_cane",
        )
    ]
    tables.append(
        (rs.entity_table("cow"), LootContext(this_entity=EntityState("cow"), killer_is_player=True))
    )
    r = random.Random(1)

    def rolls(n: int) -> None:
        for i in range(n):
            table, ctx = tables[i % len(tables)]
            rs.roll(table, ctx, r)  # type: ignore[arg-type]

    print(f"loot rolls per second (terrain, ores, leaves, cow): {rate(rolls, 100_000):>10,.0f}")


if __name__ == "__main__":
    # It takes no options; --help (or anything else) prints what it measures instead of running.
    argparse.ArgumentParser(
        description=(__doc__ or "").strip(), formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
    main()
