"""A datapack that overrides one recipe or loot table changes exactly that outcome."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot_context import LootContext
from mirrorcraft.rules.pack import load_pack
from mirrorcraft.rules.ruleset import RuleSet, vanilla_ruleset
from tests.minipack import make_pack

PICK = LootContext(tool=ItemStack("iron_pickaxe"))


def sample_outcomes(rs: RuleSet) -> dict[str, object]:
    grids = {
        "log": ((("oak_log",),), "inventory"),
        "sticks": ((("oak_planks",), ("oak_planks",)), "inventory"),
        "book": ((("paper", "paper"), ("paper", "leather")), "inventory"),
        "furnace": (
            (("cobblestone",) * 3, ("cobblestone", None, "cobblestone"), ("cobblestone",) * 3),
            "crafting_table",
        ),
    }
    out: dict[str, object] = {k: rs.craft(g, s) for k, (g, s) in grids.items()}
    for block in ("iron_ore", "diamond_ore", "stone", "coal_ore"):
        table = rs.block_table(block)
        assert table is not None
        out[block] = [rs.roll(table, PICK, random.Random(i)) for i in range(20)]
    out["smelt"] = rs.cooking("raw_iron", "furnace")
    return out


def test_one_recipe_override_changes_only_that_outcome(tmp_path: Path) -> None:
    pack = make_pack(
        tmp_path,
        "furnace_to_blast",
        {
            "data/minecraft/recipes/furnace.json": {
                "type": "minecraft:crafting_shaped",
                "pattern": ["###", "# #", "###"],
                "key": {"#": {"tag": "minecraft:stone_crafting_materials"}},
                "result": {"item": "minecraft:blast_furnace"},
            }
        },
    )
    vanilla = vanilla_ruleset()
    mirror = RuleSet.load([load_pack(pack)])
    a, b = sample_outcomes(vanilla), sample_outcomes(mirror)
    assert {k for k in a if a[k] != b[k]} == {"furnace"}
    assert b["furnace"].item == "blast_furnace"  # type: ignore[attr-defined]


def test_one_loot_override_changes_only_that_outcome(tmp_path: Path) -> None:
    pack = make_pack(
        tmp_path,
        "compressed_iron",
        {
            "data/minecraft/loot_tables/blocks/iron_ore.json": {
                "type": "minecraft:block",
                "pools": [
                    {
                        "rolls": 1,
                        "entries": [{"type": "minecraft:item", "name": "minecraft:raw_iron_block"}],
                    }
                ],
            }
        },
    )
    vanilla = vanilla_ruleset()
    mirror = RuleSet.load([load_pack(pack)])
    a, b = sample_outcomes(vanilla), sample_outcomes(mirror)
    assert {k for k in a if a[k] != b[k]} == {"iron_ore"}
    assert all(d == [ItemStack("raw_iron_block", 1)] for d in b["iron_ore"])  # type: ignore[attr-defined]
    # deepslate iron ore has its own table and is untouched
    t = mirror.block_table("deepslate_iron_ore")
    assert t is not None and mirror.roll(t, PICK, random.Random(0)) == [ItemStack("raw_iron", 1)]


def test_rule_sets_share_parsed_files_only_where_document_and_tags_agree(tmp_path: Path) -> None:
    """Files a pack leaves alone are parsed once per process and shared between rule sets
    (``ruleset._PARSED``); a changed file, or an unchanged one read under changed item
    tags, is parsed anew. Either way the rule set equals one built with nothing shared."""
    from mirrorcraft.rules import ruleset as ruleset_module

    furnace = {
        "type": "minecraft:crafting_shaped",
        "pattern": ["###", "# #", "###"],
        "key": {"#": {"tag": "minecraft:stone_crafting_materials"}},
        "result": {"item": "minecraft:blast_furnace"},
    }
    recipe_pack = load_pack(
        make_pack(tmp_path, "recipe", {"data/minecraft/recipes/furnace.json": furnace})
    )
    tag_pack = load_pack(
        make_pack(
            tmp_path,
            "birch_only",
            {
                "data/minecraft/tags/items/planks.json": {
                    "replace": True,
                    "values": ["minecraft:birch_planks"],
                }
            },
        )
    )
    vanilla = vanilla_ruleset()
    shared = RuleSet.load([recipe_pack])
    retagged = RuleSet.load([tag_pack])
    assert shared.recipes["minecraft:stick"] is vanilla.recipes["minecraft:stick"]
    assert (
        shared.loot_tables["minecraft:blocks/stone"]
        is vanilla.loot_tables["minecraft:blocks/stone"]
    )
    assert shared.recipes["minecraft:furnace"] is not vanilla.recipes["minecraft:furnace"]
    assert retagged.recipes["minecraft:stick"] is not vanilla.recipes["minecraft:stick"]
    oak_sticks = ((("oak_planks",), ("oak_planks",)), "inventory")
    assert vanilla.craft(*oak_sticks) is not None
    assert retagged.craft(*oak_sticks) is None  # the stick recipe reads #planks anew
    built = [(shared, [recipe_pack]), (retagged, [tag_pack]), (vanilla, [])]
    ruleset_module._PARSED.clear()
    for rs, extra in built:
        fresh = RuleSet.load(extra) if extra else RuleSet.load(name="vanilla")
        assert fresh.fingerprint == rs.fingerprint
        assert sample_outcomes(fresh) == sample_outcomes(rs)
        assert set(fresh.recipes) == set(rs.recipes)


def test_parsing_contexts_past_the_limit_start_both_memos_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With few contexts allowed, rule sets with other item tags keep coming: each still
    equals one built with nothing shared (a context number never names two contexts
    while something parsed under it is kept)."""
    from mirrorcraft.rules import ruleset as ruleset_module

    monkeypatch.setattr(ruleset_module, "CONTEXTS_LIMIT", 2)
    packs = [
        load_pack(
            make_pack(
                tmp_path,
                f"planks_{wood}",
                {
                    "data/minecraft/tags/items/planks.json": {
                        "replace": True,
                        "values": [f"minecraft:{wood}_planks"],
                    }
                },
            )
        )
        for wood in ("oak", "birch", "spruce", "jungle")
    ]
    built = [RuleSet.load([p]) for p in packs * 2]
    assert len(ruleset_module._CONTEXTS) <= 2
    sticks = {
        wood: ((((f"{wood}_planks",), (f"{wood}_planks",)), "inventory"))
        for wood in ("oak", "birch", "spruce", "jungle")
    }
    for rs, wood in zip(built, ("oak", "birch", "spruce", "jungle") * 2, strict=True):
        assert {w for w, grid in sticks.items() if rs.craft(*grid) is not None} == {wood}
    ruleset_module._PARSED.clear()
    ruleset_module._CONTEXTS.clear()
    for rs, pack in zip(built, packs * 2, strict=True):
        assert RuleSet.load([pack]).fingerprint == rs.fingerprint
