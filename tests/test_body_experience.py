"""Experience from breaking ores and killing mobs, as the game gives it: the ranges come from
the game facts (``data/game/blocks.json`` and ``entities.json``, written from
``scripts/vanilla_facts/experience.yaml``), only with a tool correct for the block's drops,
never with Silk Touch, and from draws keyed apart from the loot rolls'. The twins' equal
observations (experience level included) are checked by the twin tests."""

from __future__ import annotations

import pytest

from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.body.body import _points_for_next
from mirrorcraft.rules.errors import RulesError
from mirrorcraft.rules.game import _experience, load_game_data
from mirrorcraft.rules.items import ItemStack
from tests.simtools import act, episode


def _points(ep: SimEpisode) -> float:
    """Experience points the body holds in all (levels turned back into points)."""
    body = ep.body
    return body.xp_points + sum(_points_for_next(level) for level in range(body.level))


def _ores_beside(ep: SimEpisode, block: str, n: int) -> None:
    """``n`` blocks of ``block`` in a row next to the body (within reach: no walking)."""
    x, y, z = ep.body.pos
    for i in range(n):
        ep.state.set_block((x + 1, y + i % 2, z + i // 2 - 1), block)


def _mine_from_level_0(ep: SimEpisode, block: str, n: int) -> tuple[float, dict[str, int]]:
    ep.body.level, ep.body.xp_points = 0, 0.0
    _ores_beside(ep, block, n)
    out = act(ep, "mine", block=block, count=n)
    assert out.result.ok, out.result.message
    return _points(ep), out.observation.inventory


def test_game_facts_carry_the_ranges() -> None:
    game = load_game_data()
    assert game.blocks["coal_ore"].experience == (0, 2)
    assert game.blocks["deepslate_diamond_ore"].experience == (3, 7)
    assert game.blocks["redstone_ore"].experience == (1, 5)
    assert game.blocks["iron_ore"].experience == (0, 0)
    assert game.blocks["stone"].experience == (0, 0)
    assert game.entities["cow"].experience == (1, 3)
    assert game.entities["skeleton"].experience == (6, 8)
    assert game.entities["villager"].experience == (0, 0)


def test_diamond_ore_gives_three_to_seven_points_each() -> None:
    ep = episode(inventory={"iron_pickaxe": 1})
    points, inventory = _mine_from_level_0(ep, "diamond_ore", 4)
    assert inventory.get("diamond") == 4
    assert 12 <= points <= 28
    assert ep.body.level >= 1  # 7 points make level 1
    again = episode(inventory={"iron_pickaxe": 1})
    assert _mine_from_level_0(again, "diamond_ore", 4)[0] == points  # same seed, same draws


def test_silk_touch_a_wrong_tool_or_iron_ore_give_none() -> None:
    silk = episode()
    silk.body.inventory.add(ItemStack("iron_pickaxe", 1, (("silk_touch", 1),)))
    points, inventory = _mine_from_level_0(silk, "diamond_ore", 2)
    assert inventory.get("diamond_ore") == 2 and points == 0  # the block itself, no orbs

    iron = episode(inventory={"stone_pickaxe": 1})
    points, inventory = _mine_from_level_0(iron, "iron_ore", 4)
    assert inventory.get("raw_iron", 0) >= 4 and points == 0

    wrong = episode(inventory={"wooden_pickaxe": 1})
    wrong.body.level, wrong.body.xp_points = 0, 0.0
    _ores_beside(wrong, "diamond_ore", 1)
    act(wrong, "mine", block="diamond_ore")
    assert _points(wrong) == 0  # no harvest, no experience


def test_killing_a_cow_gives_one_to_three_points() -> None:
    ep = episode()
    act(ep, "explore", target="cow")
    ep.body.level, ep.body.xp_points = 0, 0.0
    out = act(ep, "attack", target="cow", count=2)
    assert out.result.ok and out.result.details["killed"] == 2
    assert 2 <= _points(ep) <= 6


@pytest.mark.parametrize("bad", [[3], [5, 2], [-1, 2], ["1", 2], 4, [0, 2.5]])
def test_a_bad_range_in_game_data_is_one_clear_error(bad: object) -> None:
    with pytest.raises(RulesError, match="coal_ore: experience must be"):
        _experience("coal_ore", bad)
