"""Vanilla 1.19 behaviour pinned on concrete cases, against the packaged pack."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot_context import EntityState, LootContext
from mirrorcraft.rules.ruleset import RuleSet, vanilla_ruleset

P = "oak_planks"


@pytest.fixture(scope="module")
def rs() -> RuleSet:
    return vanilla_ruleset()


def craft(
    rs: RuleSet, rows: list[list[str | None]], station: str = "crafting_table"
) -> tuple[str, int] | None:
    out = rs.craft(tuple(tuple(r) for r in rows), station)
    return None if out is None else (out.item, out.count)


def test_log_to_four_planks_anywhere_in_the_grid(rs: RuleSet) -> None:
    assert craft(rs, [["oak_log", None], [None, None]], "inventory") == ("oak_planks", 4)
    assert craft(rs, [[None, None], [None, "oak_log"]], "inventory") == ("oak_planks", 4)
    assert craft(
        rs, [[None, None, None], [None, "stripped_oak_wood", None], [None, None, None]]
    ) == ("oak_planks", 4)
    assert craft(rs, [["spruce_log"]], "inventory") == ("spruce_planks", 4)


def test_two_planks_make_four_sticks_mixed_woods_allowed(rs: RuleSet) -> None:
    assert craft(rs, [[P, None], [P, None]], "inventory") == ("stick", 4)
    assert craft(rs, [[None, "birch_planks"], [None, P]], "inventory") == ("stick", 4)
    assert craft(rs, [[P, P], [None, None]], "inventory") == (
        "oak_pressure_plate",
        1,
    )  # horizontal: not sticks
    assert (
        craft(rs, [[P, "birch_planks"], [None, None]], "inventory") is None
    )  # plates need one wood


def test_pickaxe_shapes_need_a_table_and_the_exact_pattern(rs: RuleSet) -> None:
    pick = [[P, P, P], [None, "stick", None], [None, "stick", None]]
    assert craft(rs, pick) == ("wooden_pickaxe", 1)
    assert craft(rs, pick, "inventory") is None
    stone = [["cobblestone"] * 3, [None, "stick", None], [None, "stick", None]]
    assert craft(rs, stone) == ("stone_pickaxe", 1)
    assert craft(
        rs,
        [
            ["cobbled_deepslate", "cobblestone", "blackstone"],
            [None, "stick", None],
            [None, "stick", None],
        ],
    ) == ("stone_pickaxe", 1)
    assert craft(rs, [["iron_ingot"] * 3, [None, "stick", None], [None, "stick", None]]) == (
        "iron_pickaxe",
        1,
    )
    assert craft(rs, [["diamond"] * 3, [None, "stick", None], [None, "stick", None]]) == (
        "diamond_pickaxe",
        1,
    )
    # An axe is asymmetric: both it and its mirror image craft, shifted anywhere.
    assert craft(rs, [[P, P, None], [P, "stick", None], [None, "stick", None]]) == ("wooden_axe", 1)
    assert craft(rs, [[None, P, P], [None, "stick", P], [None, "stick", None]]) == ("wooden_axe", 1)


def test_book_enchanting_table_furnace_and_armor(rs: RuleSet) -> None:
    assert craft(rs, [["paper", "leather"], ["paper", "paper"]], "inventory") == ("book", 1)
    assert craft(rs, [["paper", "paper"], ["paper", None]], "inventory") is None
    table = [[None, "book", None], ["diamond", "obsidian", "diamond"], ["obsidian"] * 3]
    assert craft(rs, table) == ("enchanting_table", 1)
    assert craft(
        rs, [["cobblestone"] * 3, ["cobblestone", None, "cobblestone"], ["cobblestone"] * 3]
    ) == ("furnace", 1)
    assert craft(rs, [["iron_ingot", None, "iron_ingot"], ["iron_ingot", None, "iron_ingot"]]) == (
        "iron_boots",
        1,
    )
    assert craft(rs, [["sugar_cane"] * 3]) == ("paper", 3)


def test_smelting_blasting_and_fuel(rs: RuleSet) -> None:
    smelt = rs.cooking("raw_iron", "furnace")
    assert smelt is not None and (smelt.result, smelt.count, smelt.cooking_time) == (
        "iron_ingot",
        1,
        200,
    )
    blast = rs.cooking("raw_iron", "blast_furnace")
    assert (
        blast is not None
        and blast.location == "minecraft:iron_ingot_from_blasting_raw_iron"
        and blast.cooking_time == 100
    )
    assert rs.cooking("raw_iron", "smoker") is None
    assert rs.cooking("iron_hoe", "furnace").result == "iron_nugget"  # type: ignore[union-attr]
    assert rs.cooking("oak_log", "furnace").result == "charcoal"  # type: ignore[union-attr]
    assert rs.cooking("beef", "smoker").result == "cooked_beef"  # type: ignore[union-attr]
    assert (
        rs.fuel_ticks("coal") == 1600
        and rs.fuel_ticks("oak_planks") == 300
        and rs.fuel_ticks("stick") == 100
    )
    assert rs.fuel_ticks("crimson_planks") == 0  # nether wood does not burn
    assert rs.fuel_ticks("cobblestone") == 0


def test_harvest_rules(rs: RuleSet) -> None:
    assert not rs.can_harvest("iron_ore", "wooden_pickaxe")
    assert rs.can_harvest("iron_ore", "stone_pickaxe")
    assert not rs.can_harvest("diamond_ore", "stone_pickaxe") and rs.can_harvest(
        "diamond_ore", "iron_pickaxe"
    )
    assert not rs.can_harvest("obsidian", "iron_pickaxe") and rs.can_harvest(
        "obsidian", "diamond_pickaxe"
    )
    assert not rs.can_harvest("stone", None) and rs.can_harvest("stone", "wooden_pickaxe")
    assert not rs.can_harvest("stone", "diamond_shovel")
    assert rs.can_harvest("oak_log", None) and rs.can_harvest("dirt", None)
    assert rs.required_tool("obsidian") == ("pickaxe", 3)


def roll_counts(
    rs: RuleSet, table: str, ctx: LootContext, n: int = 3000
) -> Counter[tuple[str, int]]:
    t = rs.loot_tables[table]
    c: Counter[tuple[str, int]] = Counter()
    for i in range(n):
        for s in rs.roll(t, ctx, random.Random(i)):
            c[(s.item, s.count)] += 1
    return c


def test_ore_loot(rs: RuleSet) -> None:
    pick = ItemStack("iron_pickaxe")
    lapis = roll_counts(rs, "minecraft:blocks/lapis_ore", LootContext(tool=pick, block="lapis_ore"))
    assert {count for (_item, count) in lapis} == set(range(4, 10))
    assert roll_counts(rs, "minecraft:blocks/iron_ore", LootContext(tool=pick)) == Counter(
        {("raw_iron", 1): 3000}
    )
    silk = ItemStack("iron_pickaxe", 1, (("silk_touch", 1),))
    assert set(roll_counts(rs, "minecraft:blocks/iron_ore", LootContext(tool=silk), 50)) == {
        ("iron_ore", 1)
    }
    fortune = ItemStack("iron_pickaxe", 1, (("fortune", 3),))
    assert (
        max(
            c
            for (_i, c) in roll_counts(
                rs, "minecraft:blocks/diamond_ore", LootContext(tool=fortune), 500
            )
        )
        == 4
    )
    assert set(roll_counts(rs, "minecraft:blocks/stone", LootContext(tool=pick), 20)) == {
        ("cobblestone", 1)
    }
    assert set(roll_counts(rs, "minecraft:blocks/sugar_cane", LootContext(), 20)) == {
        ("sugar_cane", 1)
    }
    assert set(roll_counts(rs, "minecraft:blocks/copper_ore", LootContext(tool=pick))) == {
        ("raw_copper", c) for c in range(2, 6)
    }


def test_cow_drops_leather_0_to_2_and_beef_1_to_3(rs: RuleSet) -> None:
    ctx = LootContext(this_entity=EntityState("cow"), killer_is_player=True)
    counts = roll_counts(rs, "minecraft:entities/cow", ctx)
    assert {c for (i, c) in counts if i == "leather"} == {1, 2}
    assert {c for (i, c) in counts if i == "beef"} == {1, 2, 3}
    assert counts[("leather", 1)] + counts[("leather", 2)] < 3000  # sometimes no leather at all
    burning = roll_counts(
        rs, "minecraft:entities/cow", LootContext(this_entity=EntityState("cow", on_fire=True)), 50
    )
    assert any(i == "cooked_beef" for (i, _c) in burning) and not any(
        i == "beef" for (i, _c) in burning
    )


def test_storage_blocks_unpack_to_nine(rs: RuleSet) -> None:
    for block, item in [
        ("raw_iron_block", "raw_iron"),
        ("iron_block", "iron_ingot"),
        ("coal_block", "coal"),
        ("diamond_block", "diamond"),
        ("lapis_block", "lapis_lazuli"),
        ("gold_block", "gold_ingot"),
    ]:
        assert craft(rs, [[block, None], [None, None]], "inventory") == (item, 9), block


def test_resource_locations_follow_the_game(rs: RuleSet) -> None:
    for loc in [
        "oak_planks",
        "stick",
        "furnace",
        "iron_ingot_from_smelting_raw_iron",
        "iron_ingot_from_blasting_raw_iron",
        "raw_iron",
        "paper",
        "book",
    ]:
        assert f"minecraft:{loc}" in rs.recipes, loc
    assert rs.craft((("oak_log",),), "inventory").recipe == "minecraft:oak_planks"  # type: ignore[union-attr]
    assert (
        "minecraft:blocks/iron_ore" in rs.loot_tables and "minecraft:entities/cow" in rs.loot_tables
    )


def test_advancements_fire_from_inventory_changes_and_enchanting(rs: RuleSet) -> None:
    from mirrorcraft.rules.advancements import (
        InventoryView,
        enchanted_item_fires,
        inventory_changed_fires,
    )

    sizes = rs.game.items
    mine_stone = rs.advancements["story/mine_stone"].criteria["get_stone"]
    cobble = ItemStack("cobblestone", 1)
    assert inventory_changed_fires(mine_stone, InventoryView((cobble,)), cobble, sizes)
    dirt = ItemStack("dirt", 1)
    assert not inventory_changed_fires(mine_stone, InventoryView((dirt,)), dirt, sizes)
    armor = rs.advancements["story/obtain_armor"]
    boots = ItemStack("iron_boots")
    met = {
        n
        for n, c in armor.criteria.items()
        if inventory_changed_fires(c, InventoryView((boots,)), boots, sizes)
    }
    assert armor.is_done(met) and len(met) == 1
    enchant = next(iter(rs.advancements["story/enchant_item"].criteria.values()))
    assert enchanted_item_fires(enchant, ItemStack("wooden_pickaxe", 1, (("efficiency", 1),)), 1)
