"""Properties: rules never create items the data does not name; rolls are reproducible."""

from __future__ import annotations

import random

from hypothesis import example, given, settings
from hypothesis import strategies as st

from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot_context import EntityState, LootContext
from mirrorcraft.rules.recipes import InertRecipe, ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.ruleset import vanilla_ruleset
from mirrorcraft.rules.special_recipes import ENGINE_RULES

RS = vanilla_ruleset()
RESULTS = {r.result for r in RS.recipes.values() if isinstance(r, ShapedRecipe | ShapelessRecipe)}
INGREDIENT_ITEMS = sorted(
    {i for r in RS.recipes.values() if isinstance(r, ShapedRecipe) for c in r.cells if c for i in c}
    | {
        i
        for r in RS.recipes.values()
        if isinstance(r, ShapelessRecipe)
        for c in r.ingredients
        for i in c
    }
)
TABLES = sorted(RS.loot_tables)
TOOLS = [None, "wooden_pickaxe", "iron_pickaxe", "diamond_pickaxe", "shears", "iron_axe"]

cell = st.one_of(st.none(), st.sampled_from(INGREDIENT_ITEMS))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(cell, min_size=3, max_size=3), min_size=3, max_size=3))
@example([[None, None, None], [None, None, "bow"], [None, None, "bow"]])  # repair_item
def test_any_grid_yields_a_declared_recipe_result_or_nothing(rows: list[list[str | None]]) -> None:
    out = RS.craft(tuple(tuple(r) for r in rows), "crafting_table")
    if out is None:
        return
    recipe = RS.recipes[out.recipe]
    if isinstance(recipe, ShapedRecipe | ShapelessRecipe):
        assert out.item in RESULTS and recipe.result == out.item and not out.repair
        return
    # A special recipe the engine implements (e.g. two worn bows make one repaired bow):
    # its output is one of the grid's own items, never an item the data does not name.
    assert isinstance(recipe, InertRecipe) and recipe.kind in ENGINE_RULES
    grid_items = {c for r in rows for c in r if c is not None}
    assert out.item in grid_items and out.item in RS.game.items and out.count == 1


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(TABLES), st.sampled_from(TOOLS), st.integers(0, 3), st.integers(0, 2**32 - 1)
)
def test_loot_only_names_declared_items_and_is_reproducible(
    table: str, tool: str | None, fortune: int, seed: int
) -> None:
    t = RS.loot_tables[table]
    ench = (("fortune", fortune),) if fortune else ()
    ctx = LootContext(
        tool=ItemStack(tool, 1, ench) if tool else None,
        this_entity=EntityState(table.rsplit("/", 1)[-1]),
        killer_is_player=True,
    )
    first = RS.roll(t, ctx, random.Random(seed))
    again = RS.roll(t, ctx, random.Random(seed))
    assert first == again
    allowed = RS.table_outputs(t)
    assert all(s.item in allowed and s.count > 0 for s in first)
