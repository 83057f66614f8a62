"""Vanilla rules the simulator used to bend: sheep colours, special recipes, double plants,
bookshelves behind blocks, tool tags and the loot command's player context."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.body import results as r
from mirrorcraft.body.skills.crafting import count_bookshelves
from mirrorcraft.rules.pack import PackData
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.world.generate import draw_variant
from mirrorcraft.world.registry import load_world, world_ids
from tests.simtools import act, episode

SHEEP_WEIGHTS = {
    "white": 40918,
    "black": 2500,
    "gray": 2500,
    "light_gray": 2500,
    "brown": 1500,
    "pink": 82,
}
"""Sheep.getRandomSheepColor as weights out of 50000 (5/5/5/3 percent, pink 1/500 of the rest)."""


def test_sheep_colours_follow_vanillas_natural_weights() -> None:
    weights = vanilla_rules().entity_variants("sheep")
    assert dict(weights) == SHEEP_WEIGHTS
    n = 50_000
    seen = Counter(draw_variant(seed, mob, weights) for seed in range(50) for mob in range(1000))
    for colour, w in SHEEP_WEIGHTS.items():
        expected = n * w / 50_000
        assert abs(seen[colour] - expected) < 5 * expected**0.5 + 5, (colour, seen[colour])
    # The packaged worlds draw every sheep's colour this way, from the world seed.
    sheep = [m for w in world_ids() for m in load_world(w).world.mobs if m.type == "sheep"]
    assert sheep and all(m.variant in SHEEP_WEIGHTS for m in sheep)
    world = load_world("plains-1").world
    assert all(
        m.variant == draw_variant(world.seed, m.id, weights)
        for m in world.mobs
        if m.type == "sheep"
    )
    assert {m.variant for m in world.mobs if m.type != "sheep"} == {""}


def test_a_sheep_drops_wool_of_its_colour() -> None:
    for colour in ("black", "white"):
        ep = episode()
        for mob in ep.state.mobs:
            mob.variant = colour if mob.type == "sheep" else mob.variant
        act(ep, "explore", target="sheep")
        out = act(ep, "attack", target="sheep", count=1)
        assert out.result.ok and out.result.produced.get(f"{colour}_wool") == 1, out.result
        assert out.result.produced.get("mutton", 0) >= 1


def _craft(inventory: dict[str, int], grid: list[list[str | None]]):  # type: ignore[no-untyped-def]
    ep = episode(inventory=inventory)
    return act(ep, "craft_grid", station="inventory", grid=grid)


def test_firework_rockets_craft_from_paper_and_one_to_three_gunpowder() -> None:
    for powder in (1, 2, 3):
        cells = ["paper"] + ["gunpowder"] * powder + [None] * (3 - powder)
        out = _craft({"paper": 1, "gunpowder": 3}, [cells[:2], cells[2:]])
        assert out.result.ok and out.result.produced == {"firework_rocket": 3}, out.result
        assert out.observation.inventory.get("gunpowder", 0) == 3 - powder
    no = [
        [["paper", None], [None, None]],  # no gunpowder
        [["gunpowder", "gunpowder"], [None, None]],  # no paper
        [["paper", "paper"], ["gunpowder", None]],  # two sheets
        [["paper", "gunpowder"], ["gunpowder", "stick"]],  # something else in the grid
    ]
    for grid in no:
        out = _craft({"paper": 2, "gunpowder": 3, "stick": 1}, grid)
        assert out.result.reason == r.NO_RESULT, grid
    ep = episode(inventory={"paper": 1, "gunpowder": 4, "crafting_table": 1})
    act(ep, "place", block="crafting_table")
    four = [["paper", "gunpowder", "gunpowder"], ["gunpowder", "gunpowder", None], [None] * 3]
    assert act(ep, "craft_grid", station="crafting_table", grid=four).result.reason == r.NO_RESULT


def test_special_recipes_are_rules_of_the_datapack_not_of_item_names() -> None:
    rules = vanilla_rules()
    outcome = rules.craft((("paper", "gunpowder"),), "inventory")
    assert outcome is not None and outcome.recipe == "minecraft:firework_rocket"
    # A pack that replaces the special recipe file turns the engine rule off.
    doc = {"type": "minecraft:crafting_special_bookcloning"}
    off = PackData("no-rockets", "", 10, {("recipes", "minecraft:firework_rocket"): doc})
    assert RuleSet.load([off]).craft((("paper", "gunpowder"),), "inventory") is None


def test_dyeing_armour_and_decorating_a_shield_keep_the_item() -> None:
    out = _craft(
        {"leather_chestplate": 1, "red_dye": 2},
        [["leather_chestplate", "red_dye"], ["red_dye", None]],
    )
    assert out.result.ok and out.observation.inventory == {"leather_chestplate": 1}
    out = _craft({"shield": 1, "white_banner": 1}, [["shield", "white_banner"], [None, None]])
    assert out.result.ok and out.observation.inventory == {"shield": 1}
    assert (
        _craft({"shield": 1}, [["shield", "shield"], [None, None]]).result.reason == r.MISSING_ITEM
    )


def _seeds(block: str, seed: int, half: str) -> int:
    ep = episode(seed=seed, inventory={block: 1})
    assert act(ep, "place", block=block).result.ok
    cells = sorted(p for p in ep.state.placed[ep.state.loaded.world.palette.ids[block]])
    assert len(cells) == 2 and cells[0][1] + 1 == cells[1][1]  # both halves stand
    lower, upper = cells
    ep.body.step = 1
    drops = ep.body.break_block(lower if half == "lower" else upper)
    assert ep.state.block(lower) == "air" and ep.state.block(upper) == "air"
    return sum(d.count for d in drops if d.item == "wheat_seeds")


def test_tall_grass_and_large_fern_drop_seeds_one_time_in_eight() -> None:
    # The loot table asks for the other half's real state (half=upper above the lower
    # half and the reverse); with default states it never matched and nothing dropped.
    for block in ("tall_grass", "large_fern"):
        for half in ("lower", "upper"):
            n = 240
            got = sum(_seeds(block, seed, half) for seed in range(n))
            assert 0.07 < got / n < 0.19, (block, half, got)


def _table_with_shelves(blocker: str | None):  # type: ignore[no-untyped-def]
    ep = episode()
    x, _y, z = ep.body.pos
    table = (x, 100, z)
    ep.state.set_block(table, "enchanting_table")
    for dy in (0, 1):
        ep.state.set_block((x + 2, 100 + dy, z), "bookshelf")
        ep.state.set_block((x + 2, 100 + dy, z + 1), "bookshelf")
    if blocker:
        ep.state.set_block((x + 1, 100, z), blocker)
    return ep, table


def test_a_bookshelf_behind_a_block_does_not_count() -> None:
    ep, table = _table_with_shelves(None)
    assert count_bookshelves(ep.body, table) == 4
    ep, table = _table_with_shelves("torch")
    # The torch blocks the straight shelves; the pair beside the corner counts through (1, 1).
    assert count_bookshelves(ep.body, table) == 2
    ep.state.set_block((table[0] + 1, 101, table[2] + 1), "dirt")
    assert count_bookshelves(ep.body, table) == 0


def test_moss_carpet_is_mineable_with_a_hoe() -> None:
    assert "moss_carpet" in vanilla_rules().block_tags["mineable/hoe"]


def test_rules_loot_rolls_as_a_player_breaking_the_block() -> None:
    def loot(*extra: str) -> dict[str, object]:
        cmd = [sys.executable, "-m", "mirrorcraft.cli", "rules", "loot", "snow", *extra]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        doc: dict[str, object] = json.loads(done.stdout)
        return doc

    with_shovel = loot("--tool", "wooden_shovel", "--rolls", "3")
    assert with_shovel["harvestable"] and with_shovel["rolls"] == [{"snowball": 1}] * 3
    assert loot()["rolls"] == [{}]  # bare hands do not harvest snow
