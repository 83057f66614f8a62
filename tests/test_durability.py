"""Tools wear out as in vanilla: per-block and per-hit costs, Unbreaking, breaking, reporting."""

from __future__ import annotations

import statistics

from mirrorcraft.body import results as r
from mirrorcraft.body.body import Body
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.world.index import Pos
from tests.simtools import act, episode


def _stone_cells(body: Body, n: int, block: str = "stone") -> list[Pos]:
    """Place ``n`` blocks in the open sky above the spawn (far from anything else)."""
    x0, _y, z0 = body.pos
    cells = [(x0 + dx, 100 + dy, z0 + 3) for dy in range(10) for dx in range(-8, 9)][:n]
    for cell in cells:
        body.state.set_block(cell, block)
    return cells


def _pickaxe_left(body: Body, item: str = "wooden_pickaxe") -> list[int]:
    top = body.rules.game.durability[item]
    return sorted(
        top - k[2] for k, c in body.inventory.counts.items() if k[0] == item for _ in range(c)
    )


def test_a_wooden_pickaxe_breaks_on_exactly_its_59th_block() -> None:
    ep = episode(inventory={"wooden_pickaxe": 1})
    body = ep.body
    assert body.rules.game.durability["wooden_pickaxe"] == 59
    cells = _stone_cells(body, 60)
    for i, cell in enumerate(cells[:58]):
        assert body.break_block(cell) == [ItemStack("cobblestone", 1)]
        assert _pickaxe_left(body) == [59 - (i + 1)]
    # The 59th block still drops (the harvest is decided before the wear), then it breaks.
    assert body.break_block(cells[58]) == [ItemStack("cobblestone", 1)]
    assert body.inventory.total("wooden_pickaxe") == 0 and body.broken == ["wooden_pickaxe"]
    assert body.break_block(cells[59]) == []  # bare hands harvest no stone


def test_unbreaking_makes_a_pickaxe_last_longer_on_average() -> None:
    lasted = []
    for seed in range(5):
        ep = episode(seed=seed)
        body = ep.body
        body.inventory.add(ItemStack("wooden_pickaxe", 1, (("unbreaking", 3),)))
        cells = _stone_cells(body, 170)
        n = 0
        while body.inventory.total("wooden_pickaxe") and n < len(cells):
            body.step = n  # each break its own keyed draws
            body.break_block(cells[n])
            n += 1
        lasted.append(n)
    # Each use sticks with chance 1/4 under Unbreaking III: 59 uses last ~236 blocks.
    assert all(n > 59 for n in lasted) and statistics.fmean(lasted) > 2 * 59


def test_blocks_of_hardness_zero_cost_nothing_and_swords_pay_two() -> None:
    ep = episode(inventory={"wooden_shovel": 1, "wooden_sword": 1})
    body = ep.body
    cells = _stone_cells(body, 3, "dirt")
    body.break_block(cells[0])
    assert _pickaxe_left(body, "wooden_shovel") == [58]
    grass = _stone_cells(body, 1, "sugar_cane")[0]
    body.break_block(grass)  # hardness 0: no tool wears
    assert _pickaxe_left(body, "wooden_shovel") == [58]
    webs = [(c[0], c[1] + 5, c[2]) for c in cells]
    for cell in webs:
        body.state.set_block(cell, "cobweb")
    for i, cell in enumerate(webs):
        assert body.break_block(cell) == [ItemStack("string", 1)]
        assert _pickaxe_left(body, "wooden_sword") == [59 - 2 * (i + 1)]


def test_cobweb_needs_a_sword_or_shears_and_follows_its_loot_table() -> None:
    rules = episode().body.rules
    assert rules.can_harvest("cobweb", "stone_sword") and rules.can_harvest("cobweb", "shears")
    assert not rules.can_harvest("cobweb", None) and not rules.can_harvest("cobweb", "iron_pickaxe")
    for tool, drop in (("wooden_sword", "string"), ("shears", "cobweb")):
        ep = episode(inventory={"cobweb": 1, tool: 1})
        assert act(ep, "place", block="cobweb").result.ok
        out = act(ep, "mine", block="cobweb", count=1)
        assert out.result.ok and out.result.produced == {drop: 1}, out.result
    ep = episode(inventory={"cobweb": 1})
    act(ep, "place", block="cobweb")
    assert act(ep, "mine", block="cobweb", count=1).result.reason == r.NEEDS_TOOL


def test_hits_wear_weapons_and_a_broken_tool_is_reported() -> None:
    ep = episode(inventory={"wooden_sword": 1})
    act(ep, "explore", target="cow")
    out = act(ep, "attack", target="cow", count=1)
    # A cow has 10 health; a wooden sword deals 4: three hits at 1 durability each.
    assert out.result.ok and _pickaxe_left(ep.body, "wooden_sword") == [56]
    assert out.observation.durability == [{"item": "wooden_sword", "remaining": 56, "max": 59}]
    ep = episode(inventory={"wooden_pickaxe": 1, "wooden_sword": 1})
    ep.body.inventory.take(("wooden_pickaxe", (), 0))
    ep.body.inventory.add(ItemStack("wooden_pickaxe", 1, (), 57))
    out = act(ep, "mine", block="stone", count=4)
    assert "wooden_pickaxe" in out.result.details["tools_broken"]
    assert "the wooden_pickaxe broke" in out.result.message
    assert out.observation.inventory.get("wooden_pickaxe") is None
    assert all(d["item"] != "wooden_pickaxe" for d in out.observation.durability)


def test_an_explore_through_stone_wears_the_pickaxe_and_stops_when_it_breaks() -> None:
    ep = episode(inventory={"iron_pickaxe": 1})
    out = act(ep, "explore", target="diamond_ore")
    dug = out.result.details.get("dug", 0) or 0
    left = out.observation.durability[0]["remaining"]
    assert left < 250 and 250 - left <= max(dug, 32)
    # A nearly worn stone pickaxe: the way down breaks it and the body stops there.
    ep = episode()
    ep.body.inventory.add(ItemStack("stone_pickaxe", 1, (), 127))  # 4 uses left
    out = act(ep, "explore", target="diamond_ore")
    assert not out.result.ok and out.result.reason == r.NEEDS_TOOL, out.result
    assert out.result.details["tools_broken"] == ["stone_pickaxe"]
    assert out.observation.inventory.get("cobblestone", 0) >= 3


def test_a_path_block_never_breaks_a_tool_another_one_can_replace() -> None:
    ep = episode(inventory={"stone_pickaxe": 1})
    body = ep.body
    body.inventory.take(("stone_pickaxe", (), 0))
    body.inventory.add(ItemStack("stone_pickaxe", 1, (), 130))  # 1 use left
    body.inventory.add(ItemStack("wooden_pickaxe", 1))
    cell = _stone_cells(body, 1)[0]
    body.break_block(cell, needed=False)  # in the way: the wooden one takes the wear
    assert _pickaxe_left(body, "stone_pickaxe") == [1] and _pickaxe_left(body) == [58]
    cell = _stone_cells(body, 1, "iron_ore")[0]
    body.break_block(cell)  # the target itself: the best tool, even on its last use
    assert body.inventory.total("stone_pickaxe") == 0


def test_the_way_is_dug_at_most_max_path_digs_blocks_per_call() -> None:
    ep = episode(inventory={"iron_pickaxe": 1})
    assert ep.body.config.max_path_digs == 32
    out = act(ep, "explore", target="diamond_ore")  # 64 blocks away, deep under plains-1
    assert out.result.reason == r.TARGET_UNREACHABLE and out.result.details["dug"] == 32
    assert "too long to dig in one call" in out.result.message
    assert out.observation.inventory.get("cobblestone", 0) > 0  # what the way dropped
    again = act(ep, "explore", target="diamond_ore")  # the next call goes on from there
    assert again.result.ok and again.result.details["distance"] < 30


def test_repairing_two_worn_tools_combines_their_uses() -> None:
    ep = episode()
    body = ep.body
    body.inventory.add(ItemStack("wooden_pickaxe", 1, (), 50))  # 9 left
    body.inventory.add(ItemStack("wooden_pickaxe", 1, (("efficiency", 1),), 40))  # 19 left
    out = act(
        ep,
        "craft_grid",
        station="inventory",
        grid=[["wooden_pickaxe", "wooden_pickaxe"], [None, None]],
    )
    assert out.result.ok and out.observation.inventory == {"wooden_pickaxe": 1}
    # 9 + 19 + 59 * 5 // 100 (= 2) uses; enchantments are lost (only curses would stay).
    assert out.observation.durability == [{"item": "wooden_pickaxe", "remaining": 30, "max": 59}]


def _oracle_step(ep, task: str = "iron_armor"):  # type: ignore[no-untyped-def]
    import asyncio

    from mirrorcraft.agents.base import EpisodeContext
    from mirrorcraft.agents.reference import OracleAgent

    agent = OracleAgent(ep.body.rules)
    agent.start(EpisodeContext(task, task, 50, 0))
    decision = asyncio.run(agent.act(ep.observe()))
    assert decision is not None
    return decision.action


def test_the_oracle_replaces_a_nearly_worn_pickaxe_before_it_breaks() -> None:
    start = {"cobblestone": 3, "stick": 2, "crafting_table": 1}
    fresh = episode(task="iron_armor", inventory={**start, "stone_pickaxe": 1})
    act(fresh, "place", block="crafting_table")
    assert _oracle_step(fresh)["skill"] != "craft_grid"  # it goes for iron with this one
    worn = episode(task="iron_armor", inventory=start)
    act(worn, "place", block="crafting_table")
    worn.body.inventory.add(ItemStack("stone_pickaxe", 1, (), 128))  # 3 uses left
    action = _oracle_step(worn)
    assert action["skill"] == "craft_grid" and action["args"]["grid"][0] == ["cobblestone"] * 3


def test_the_oracle_recovers_when_its_pickaxe_breaks_midway() -> None:
    import asyncio

    from mirrorcraft.agents.base import EpisodeContext
    from mirrorcraft.agents.reference import OracleAgent

    ep = episode(task="iron_armor", budget=60)
    agent = OracleAgent(ep.body.rules)
    agent.start(EpisodeContext("iron_armor", "Iron Armor", 60, 0))
    obs, broke, out, made = ep.observe(), [], None, 0
    while not ep.done:
        if ep.body.inventory.total("stone_pickaxe") and not broke:
            key = next(k for k in ep.body.inventory.counts if k[0] == "stone_pickaxe")
            if key[2] < 129:  # wear it down to 2 uses left, once
                ep.body.inventory.take(key)
                ep.body.inventory.add(ItemStack("stone_pickaxe", 1, (), 129))
                broke.append(True)
        decision = asyncio.run(agent.act(obs))
        if decision is None:
            break
        out = ep.step(decision.action)
        obs = out.observation
        made += out.result.produced.get("stone_pickaxe", 0)
    assert out is not None and ep.evaluator.success() and broke
    assert made == 2  # the first one, and its replacement


def test_a_long_tunnel_wears_a_wooden_pickaxe_out_over_two_calls() -> None:
    # Tunnelling ~68 blocks to deepslate used to be one call with a 59-use pickaxe intact.
    ep = episode(inventory={"wooden_pickaxe": 1})
    first = act(ep, "explore", target="deepslate")
    assert first.result.reason == r.TARGET_UNREACHABLE and first.result.details["dug"] == 32
    left = first.observation.durability[0]["remaining"]
    assert 59 - 32 <= left < 59
    second = act(ep, "explore", target="deepslate")
    assert second.result.reason == r.NEEDS_TOOL
    assert second.result.details["tools_broken"] == ["wooden_pickaxe"]
    assert (
        second.observation.durability == [] and "wooden_pickaxe" not in second.observation.inventory
    )
