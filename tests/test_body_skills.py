"""Each skill: success and each failure reason, and that failures change nothing they should not."""

from __future__ import annotations

from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.body import results as r
from mirrorcraft.world.state import GroundDrop
from tests.simtools import act, episode

P = "oak_planks"


def test_mine_log_collects_drops_and_moves_the_body() -> None:
    ep = episode()
    start = ep.body.pos
    out = act(ep, "mine", block="log", count=2)
    assert (
        out.result.ok
        and sum(v for k, v in out.observation.inventory.items() if k.endswith("_log")) == 2
    )
    assert ep.body.pos != start
    assert out.result.details["blocks"] and all(
        b.endswith("_log") for b in out.result.details["blocks"]
    )


def test_mine_needs_a_tool_and_changes_nothing_on_failure() -> None:
    ep = episode()
    before = ep.state.grid.copy()
    out = act(ep, "mine", block="stone")
    assert not out.result.ok and out.result.reason == r.NEEDS_TOOL
    assert (ep.state.grid == before).all() and out.observation.inventory == {}
    out = act(ep, "mine", block="iron_ore")
    assert out.result.reason in (r.NEEDS_TOOL, r.NO_TARGET_NEARBY)


def test_mine_with_a_pickaxe_gives_cobblestone_and_the_stone_milestone() -> None:
    ep = episode(inventory={"wooden_pickaxe": 1})
    out = act(ep, "mine", block="stone", count=3)
    assert out.result.ok and out.observation.inventory.get("cobblestone", 0) >= 3
    assert "story/mine_stone" in out.new_milestones and out.score == 10


def test_mine_reports_no_target_and_invalid_ids() -> None:
    ep = episode(inventory={"diamond_pickaxe": 1})
    assert act(ep, "mine", block="emerald_ore").result.reason == r.NO_TARGET_NEARBY
    assert act(ep, "mine", block="diamond").result.reason == r.INVALID_ARGS  # an item, not a block
    assert act(ep, "mine", block="nonsense_block").result.reason == r.INVALID_ARGS
    assert act(ep, "mine", block="log", count=9).result.reason == r.INVALID_ARGS


def test_mine_target_walled_off_is_unreachable() -> None:
    ep = episode(inventory={"wooden_pickaxe": 1})
    x, y, z = ep.body.pos
    target = (x + 3, y, z)
    ep.state.set_block(target, "coal_ore")
    for dx in range(-5, 6):
        for dy in range(-5, 6):
            for dz in range(-5, 6):
                p = (x + 3 + dx, y + dy, z + dz)
                if max(abs(dx), abs(dy), abs(dz)) == 1 and ep.state.in_bounds(p):
                    ep.state.set_block(p, "obsidian")
    hits = ep.state.nearest(["coal_ore"], ep.body.pos, 32, k=1)
    assert hits and hits[0].pos == target
    out = act(ep, "mine", block="coal_ore")
    # the wrapped ore is the nearest; the body moves on to a reachable one or reports the wall
    assert out.result.ok or out.result.reason == r.TARGET_UNREACHABLE
    if out.result.ok:
        assert ep.state.block(target) == "coal_ore"


def test_craft_grid_outcomes_and_failures() -> None:
    ep = episode(inventory={"oak_log": 2})
    out = act(ep, "craft_grid", station="inventory", grid=[["oak_log", None], [None, None]])
    assert out.result.ok and out.result.produced == {P: 4} and out.result.consumed == {"oak_log": 1}
    assert (
        act(ep, "craft_grid", station="inventory", grid=[P, None, None, None]).result.reason
        == r.INVALID_ARGS
    )
    three = [[P, P, P], [None, None, None], [None, None, None]]
    assert act(ep, "craft_grid", station="inventory", grid=three).result.reason == r.INVALID_ARGS
    assert (
        act(ep, "craft_grid", station="crafting_table", grid=three).result.reason == r.NEEDS_TABLE
    )
    assert (
        act(
            ep, "craft_grid", station="inventory", grid=[["diamond", None], [None, None]]
        ).result.reason
        == r.MISSING_ITEM
    )
    before = dict(ep.body.inventory.totals())
    out = act(ep, "craft_grid", station="inventory", grid=[["oak_log", P], [None, None]])
    assert out.result.reason == r.NO_RESULT and ep.body.inventory.totals() == before


def test_crafting_table_station_flow() -> None:
    ep = episode(inventory={P: 8, "stick": 2})
    assert act(ep, "craft_grid", station="inventory", grid=[[P, P], [P, P]]).result.ok
    assert act(ep, "equip", item="crafting_table").result.reason == r.NOT_EQUIPPABLE
    assert act(ep, "place", block="crafting_table").result.ok
    out = act(
        ep,
        "craft_grid",
        station="crafting_table",
        grid=[[P, P, P], [None, "stick", None], [None, "stick", None]],
    )
    assert out.result.ok and out.observation.inventory.get("wooden_pickaxe") == 1
    assert any(f.id == "crafting_table" for f in out.observation.facilities)


def test_smelt_needs_station_fuel_and_input() -> None:
    ep = episode(inventory={"raw_iron": 3, "furnace": 1})
    assert act(ep, "smelt", input="raw_iron").result.reason == r.NEEDS_STATION
    assert act(ep, "place", block="furnace").result.ok
    assert act(ep, "smelt", input="raw_iron", count=3).result.reason == r.NO_FUEL
    assert ep.body.inventory.total("raw_iron") == 3
    ep.body.inventory.add(
        __import__("mirrorcraft.rules.items", fromlist=["ItemStack"]).ItemStack("coal", 1)
    )
    out = act(ep, "smelt", input="raw_iron", count=3)
    assert out.result.ok and out.observation.inventory.get("iron_ingot") == 3
    assert "story/smelt_iron" in out.new_milestones
    assert act(ep, "smelt", input="raw_iron", count=1).result.reason == r.MISSING_ITEM


def test_fuel_burned_without_finishing_one_item_is_not_reported_as_no_fuel_owned() -> None:
    # One stick is 100 ticks of fire and an ingot needs 200: the stick goes in and burns,
    # nothing is smelted. The message said "no owned fuel can run the furnace" although
    # the stick was owned and was spent (the inventory change showed it gone).
    ep = episode(inventory={"raw_iron": 1, "furnace": 1, "stick": 1})
    assert act(ep, "place", block="furnace").result.ok
    out = act(ep, "smelt", input="raw_iron").result
    assert out.reason == r.NO_FUEL
    assert out.details["fuel_used"] == {"stick": 1}
    assert "no owned fuel" not in out.message
    assert "(1 stick, now burning in the furnace) is too little" in out.message
    assert ep.body.inventory.total("raw_iron") == 1  # the input is returned
    assert ep.body.inventory.total("stick") == 0


def test_smelt_burns_surplus_input_as_fuel_but_never_what_it_smelts() -> None:
    # In the game the fuel slot takes a log while logs cook into charcoal. Until simulator
    # version 6, with only logs owned, `smelt input=oak_log` failed no_fuel. A log burns 300
    # ticks and a charcoal needs 200: 4 logs, 2 smelted, burn the other 2.
    ep = episode(inventory={"oak_log": 4, "furnace": 1})
    assert act(ep, "place", block="furnace").result.ok
    out = act(ep, "smelt", input="oak_log", count=2).result
    assert out.ok, out.message
    assert (out.details["processed"], out.details["fuel"]) == (2, {"oak_log": 2})
    assert out.consumed == {"oak_log": 4} and out.produced == {"charcoal": 2}
    assert ep.body.inventory.total("oak_log") == 0
    # The surplus runs out after one item: the log kept for the second is not burned.
    ep = episode(inventory={"oak_log": 3, "furnace": 1})
    act(ep, "place", block="furnace")
    out = act(ep, "smelt", input="oak_log", count=2).result
    assert out.ok and (out.details["processed"], out.details["fuel"]) == (1, {"oak_log": 1})
    assert "fuel ran out after 1" in out.message
    assert ep.body.inventory.total("oak_log") == 1
    assert ep.body.inventory.total("charcoal") == 1


def test_smelt_burns_other_fuel_before_surplus_input_and_needs_a_surplus() -> None:
    ep = episode(inventory={"oak_log": 2, "furnace": 1})
    act(ep, "place", block="furnace")
    out = act(ep, "smelt", input="oak_log", count=2).result
    assert out.reason == r.NO_FUEL and out.details["fuel_used"] == {}
    assert "the 2 oak_log are all to be smelted" in out.message
    assert ep.body.inventory.total("oak_log") == 2
    # A stick (100 ticks) goes in first, then one surplus log (300): 400 ticks, 2 items.
    ep = episode(inventory={"oak_log": 3, "stick": 1, "furnace": 1})
    act(ep, "place", block="furnace")
    out = act(ep, "smelt", input="oak_log", count=2).result
    assert out.ok and (out.details["processed"], out.details["fuel"]) == (
        2,
        {"oak_log": 1, "stick": 1},
    )
    assert out.consumed == {"oak_log": 3, "stick": 1}
    # With coal owned no log is burned.
    ep = episode(inventory={"oak_log": 5, "coal": 1, "furnace": 1})
    act(ep, "place", block="furnace")
    out = act(ep, "smelt", input="oak_log", count=2).result
    assert (out.details["processed"], out.details["fuel"]) == (2, {"coal": 1})
    assert ep.body.inventory.total("oak_log") == 3


def test_a_lit_furnace_burns_its_fuel_down_while_the_body_waits() -> None:
    # One coal is 1600 ticks of fire; the first ingot takes 200 of them. In the game the
    # other 1400 burn on whether or not anything cooks: after waiting 1300 ticks there is
    # fire for half an item, so the next smelt of 2 needs a new fuel, and with none owned
    # it makes nothing.
    ep = episode(inventory={"raw_iron": 3, "furnace": 1, "coal": 1})
    act(ep, "place", block="furnace")
    assert act(ep, "smelt", input="raw_iron").result.ok
    waited = act(ep, "wait", ticks=1200)
    act(ep, "wait", ticks=100)
    out = act(ep, "smelt", input="raw_iron", count=2)
    assert out.result.reason == r.NO_FUEL
    assert ep.body.inventory.total("raw_iron") == 2
    assert ep.body.inventory.total("iron_ingot") == 1
    assert waited.result.ok and "burning" in waited.result.message
    # The last 100 ticks burn out; then waiting changes nothing and says so, as before.
    assert "1 burned out" in act(ep, "wait", ticks=200).result.message
    assert act(ep, "wait", ticks=20).result.message.endswith("so nothing changed")


def test_smelt_reports_when_nothing_comes_out() -> None:
    ep = episode(inventory={"diamond_hoe": 1, "furnace": 1, "coal": 1})
    act(ep, "place", block="furnace")
    out = act(ep, "smelt", input="diamond_hoe")
    assert out.result.reason == r.NO_RESULT and ep.body.inventory.total("diamond_hoe") == 1


def test_attack_rolls_entity_loot_and_rejects_players() -> None:
    ep = episode()
    assert act(ep, "attack", target="player").result.reason == r.INVALID_ARGS
    assert act(ep, "attack", target="villager").result.reason == r.NO_TARGET_NEARBY
    act(ep, "explore", target="cow")
    out = act(ep, "attack", target="cow", count=2)
    assert out.result.ok and out.result.details["killed"] == 2
    assert out.observation.inventory.get("beef", 0) >= 2


def test_enchant_needs_table_lapis_and_an_enchantable_item() -> None:
    ep = episode(
        task="enchantment",
        inventory={"enchanting_table": 1, "lapis_lazuli": 3, "iron_pickaxe": 1, "dirt": 1},
    )
    assert act(ep, "enchant", item="iron_pickaxe").result.reason == r.NEEDS_STATION
    act(ep, "place", block="enchanting_table")
    assert act(ep, "enchant", item="dirt").result.reason == r.NOT_ENCHANTABLE
    assert act(ep, "enchant", item="book").result.reason == r.MISSING_ITEM
    out = act(ep, "enchant", item="iron_pickaxe", option="lowest")
    assert (
        out.result.ok and out.observation.enchanted_items and out.observation.experience_level == 99
    )
    assert out.terminated and out.score == 100  # the enchant_item advancement ends the task


def test_place_equip_collect_ascend_trade_wait() -> None:
    ep = episode(inventory={"dirt": 4, "stone_pickaxe": 1, "stick": 1})
    assert act(ep, "place", block="stick").result.reason == r.NOT_PLACEABLE
    assert act(ep, "place", block="furnace").result.reason == r.MISSING_ITEM
    assert act(ep, "equip", item="stone_pickaxe").result.ok and ep.body.hand == (
        "stone_pickaxe",
        (),
        0,
    )
    assert act(ep, "equip", item="diamond_sword").result.reason == r.MISSING_ITEM
    x, y, z = ep.body.pos
    assert act(ep, "ascend", height=0).result.reason == r.NO_EFFECT
    out = act(ep, "ascend", height=2)
    assert out.result.ok and ep.body.pos[1] == y + 2 and ep.body.inventory.total("dirt") == 2
    assert act(ep, "ascend", height=5).result.reason == r.MISSING_ITEM
    ep.state.drops.append(GroundDrop("apple", 2, (x + 1, y, z)))
    assert any(d.id == "apple" for d in act(ep, "wait", ticks=5).observation.nearby_drops)
    out = act(ep, "collect", item="apple")
    assert out.result.ok and out.observation.inventory.get("apple") == 2
    assert act(ep, "collect", item="apple").result.reason == r.NO_TARGET_NEARBY
    assert act(ep, "trade", give="dirt", get="emerald").result.reason == r.NO_TARGET_NEARBY


def test_collect_fails_when_the_inventory_is_full() -> None:
    ep = episode(
        inventory={
            f"{c}_wool": 64
            for c in [
                "white",
                "orange",
                "magenta",
                "light_blue",
                "yellow",
                "lime",
                "pink",
                "gray",
                "light_gray",
                "cyan",
                "purple",
                "blue",
                "brown",
                "green",
                "red",
                "black",
            ]
        }
        | {"dirt": 64 * 20}
    )
    x, y, z = ep.body.pos
    ep.state.drops.append(GroundDrop("apple", 1, (x + 1, y, z)))
    assert act(ep, "collect", item="apple").result.reason == r.PICKUP_FAILED


def test_ascend_from_underground_digs_to_the_surface() -> None:
    ep = episode(inventory={"iron_pickaxe": 1})
    act(ep, "explore", target="diamond_ore")
    assert ep.body.pos[1] < 40
    out = act(ep, "ascend", height=0)
    assert out.result.ok
    x, y, z = ep.body.pos
    assert ep.state.surface_y(x, z) < y


def test_explore_rejects_non_targets_and_remembers_regions() -> None:
    ep = episode()
    assert act(ep, "explore", target="north").result.reason in (r.NOT_SEARCHABLE, r.INVALID_ARGS)
    assert act(ep, "explore", target="diamond").result.reason == r.NOT_SEARCHABLE
    out = act(ep, "explore", target="emerald_ore")
    assert out.result.reason == r.NOT_FOUND
    visited = set(ep.state.explored_regions)
    act(ep, "explore", target="emerald_ore")
    assert ep.state.explored_regions > visited  # new regions, not the same ones again
    assert act(ep, "explore", target="villager").result.reason == r.NOT_FOUND


def test_explore_starts_a_new_sweep_once_every_region_is_visited() -> None:
    ep = episode()
    for _ in range(20):
        out = act(ep, "explore", target="emerald_ore")
        if out.result.details["all_regions_visited"]:
            break
    assert out.result.details["all_regions_visited"]
    again = act(ep, "explore", target="emerald_ore")
    assert again.result.reason == r.NOT_FOUND
    assert again.result.details["regions_visited"] > 0  # it moves on instead of staying put


def test_every_attempt_costs_one_action_and_the_budget_truncates() -> None:
    ep = episode(budget=3)
    act(ep, "wait")
    ep.step("garbage")
    out = act(ep, "mine", block="stone")
    assert out.observation.budget.used == 3 and out.truncated and not out.terminated


def test_ascend_to_the_surface_says_how_it_climbed() -> None:
    # ascend(height=0) said "dug a staircase up 7 blocks" when it had dug nothing and
    # pillared all 7 levels (placed 7 blocks underfoot).
    def down_a_shaft() -> SimEpisode:
        ep = episode(inventory={"stone_pickaxe": 1})
        for _ in range(3):
            assert act(ep, "mine", block="stone", count=4).result.ok
        return ep

    ep = down_a_shaft()
    out = act(ep, "ascend", height=0).result
    assert out.ok and out.details["pillared"] and "staircase" not in out.message
    assert out.message.startswith(f"climbed {out.details['climbed']} blocks up to the surface")
    assert "placed" in out.message and "digging" not in out.message
    # Without disposable blocks the way out is dug (a staircase), and the message says so.
    ep = down_a_shaft()
    for item in ("cobblestone", "dirt"):
        ep.body.spend(item, ep.body.inventory.total(item))
    out = act(ep, "ascend", height=0).result
    assert out.ok and "pillared" not in out.details
    assert ", digging " in out.message and "placed" not in out.message
