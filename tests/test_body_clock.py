"""Calls take game time (simulator version 5): digging by the game's formula, walking at the
body's speed, pillaring, cooking and attack cooldowns. A lit furnace burns its fuel on that
clock between calls, as in the game, instead of keeping it until its next smelt."""

from __future__ import annotations

import math

import pytest

from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.body import results as r
from mirrorcraft.body.config import default_body_config
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.world.state import GroundDrop
from tests.simtools import act, episode

TIMING = default_body_config().timing


@pytest.mark.parametrize(
    ("block", "tool", "efficiency", "haste", "ticks"),
    [
        ("stone", "stone_pickaxe", 0, 1, 10),  # 4 x 1.2 / 1.5 / 30 a tick
        ("deepslate", "stone_pickaxe", 0, 1, 19),
        ("stone", "stone_pickaxe", 0, 0, 12),  # no Haste: 0.6 s
        ("stone", None, 0, 1, 125),  # no pickaxe: speed 1, and no drops, so / 100
        ("oak_log", "iron_axe", 0, 1, 9),
        ("oak_log", "iron_pickaxe", 0, 1, 50),  # a pickaxe does not speed up wood
        ("obsidian", "diamond_pickaxe", 0, 0, 188),  # the game's 9.4 s
        ("stone", "diamond_pickaxe", 5, 0, 2),  # Efficiency V adds 26 to the speed
        ("stone", "netherite_pickaxe", 5, 2, 0),  # fast enough to break at once
        ("oak_leaves", None, 0, 0, 6),
        ("grass", None, 0, 0, 0),  # hardness 0
        ("bedrock", "diamond_pickaxe", 0, 1, -1),  # never breaks
    ],
)
def test_dig_ticks_follow_the_games_formula(
    block: str, tool: str | None, efficiency: int, haste: int, ticks: int
) -> None:
    rules = vanilla_rules()
    if block not in rules.game.blocks:
        pytest.skip(f"{block} is not in this game version's blocks")
    assert rules.dig_ticks(block, tool, efficiency, haste) == ticks


def test_breaking_a_block_costs_its_dig_time_and_the_break_delay() -> None:
    ep = episode(inventory={"stone_pickaxe": 1})
    body = ep.body
    x, y, z = body.pos
    cell = (x + 1, y, z)
    body.state.set_block(cell, "stone")
    before = body.clock
    body.break_block(cell)
    assert body.clock - before == 10 + TIMING.break_delay  # the worlds give Haste I
    body.state.set_block(cell, "grass")
    before = body.clock
    body.break_block(cell)
    assert body.clock == before  # broken at once: no delay either


def test_walking_costs_the_distance_at_the_bodys_speed() -> None:
    ep = episode()
    body = ep.body
    x, y, z = body.pos
    before = body.clock
    body.move_to((x + 30, y, z + 40))  # 50 blocks
    per_tick = TIMING.walk_speed * 1.2 / 20  # sprinting, with the worlds' Speed I
    assert body.clock - before == math.ceil(50 / per_tick)
    assert body.pos == (x + 30, y, z + 40)


def test_every_call_reports_its_game_time() -> None:
    ep = episode(inventory={"raw_iron": 4, "coal": 2, "furnace": 1, "dirt": 5})
    assert act(ep, "place", block="furnace").result.details["ticks"] == 0
    smelted = act(ep, "smelt", input="raw_iron", count=3)
    assert smelted.result.ok
    # Three items at the recipe's 200 ticks each (the furnace was placed within reach).
    assert smelted.result.details["ticks"] == 600
    climbed = act(ep, "ascend", height=2)
    assert climbed.result.details["ticks"] == 2 * TIMING.pillar_ticks
    assert act(ep, "wait", ticks=37).result.details["ticks"] == 37
    assert ep.body.clock == 600 + 2 * TIMING.pillar_ticks + 37


def test_a_fire_left_by_one_smelt_burns_on_while_other_calls_take_time() -> None:
    # One coal is 1600 ticks of fire and an ingot takes 200 of them. Smelting again right
    # away uses the fire left over. Once less than an item's 200 ticks of it is left, the
    # next smelt needs new fuel (none is owned: it fails).
    def smelt_one_then(ticks_between: int) -> str:
        ep = episode(inventory={"raw_iron": 2, "furnace": 1, "coal": 1})
        act(ep, "place", block="furnace")
        assert act(ep, "smelt", input="raw_iron").result.ok
        ep.body.clock += ticks_between  # what other calls took
        return act(ep, "smelt", input="raw_iron").result.reason

    assert smelt_one_then(0) == ""
    assert smelt_one_then(1_200) == ""  # just enough fire left for one more item
    assert smelt_one_then(1_201) == r.NO_FUEL
    assert smelt_one_then(5_000) == r.NO_FUEL


def test_a_mining_call_burns_the_fire_down() -> None:
    # The same through real calls: mining by hand takes long enough for the fire to go out.
    ep = episode(inventory={"raw_iron": 2, "furnace": 1, "coal": 1})
    act(ep, "place", block="furnace")
    assert act(ep, "smelt", input="raw_iron").result.ok
    spent = 0
    while spent <= 1_400:
        out = act(ep, "mine", block="dirt", count=4)
        assert out.result.ok, out.result.message
        spent += out.result.details["ticks"]
    assert act(ep, "smelt", input="raw_iron").result.reason == r.NO_FUEL
    ep.body.inventory.add(ItemStack("coal", 1))
    again = act(ep, "smelt", input="raw_iron")
    assert again.result.ok and again.result.details["fuel"] == {"coal": 1}


def test_an_attack_waits_out_the_weapons_cooldown_between_hits() -> None:
    ep = episode(inventory={"iron_sword": 1})
    cows = [m for m in ep.body.state.mobs if m.type == "cow" and m.alive]
    assert cows
    ep.body.pos = cows[0].pos
    out = act(ep, "attack", target="cow")
    assert out.result.ok
    # A cow has 10 health and an iron sword deals 6: two hits, each 20 / 1.6 ticks apart.
    sword = vanilla_rules().game.tools["iron_sword"]
    assert sword.attack_speed == pytest.approx(1.6)
    assert out.result.details["ticks"] >= 2 * math.ceil(20 / 1.6)


def test_an_item_left_on_the_ground_despawns_after_five_minutes_of_game_time() -> None:
    ep = episode(inventory={"dirt": 1})
    body = ep.body
    x, y, z = body.pos
    body.clock = 500
    # What the body cannot carry is left where it stands, stamped with the clock.
    body.inventory.slots = 1  # a full inventory: the next different item stays on the ground
    body.gain([ItemStack("apple", 2)])
    assert [(d.item, d.dropped_at) for d in body.state.drops] == [("apple", 500)]
    body.state.drops.append(GroundDrop("stick", 1, (x + 1, y, z), (), 3_000))
    body.clock = 500 + TIMING.drop_despawn - 2
    seen = act(ep, "wait", ticks=1)  # clock 6499: both still there
    assert body.clock == 6_499
    assert {d.id for d in seen.observation.nearby_drops} == {"apple", "stick"}
    gone = act(ep, "wait", ticks=1)  # 6500: the apple lay 6000 ticks
    assert {d.id for d in gone.observation.nearby_drops} == {"stick"}
    assert act(ep, "collect", item="apple").result.reason == r.NO_TARGET_NEARBY
    for _ in range(3):
        act(ep, "wait", ticks=1_000)  # 9500
    assert act(ep, "collect", item="stick").result.reason == r.NO_TARGET_NEARBY
    assert body.state.drops == []
