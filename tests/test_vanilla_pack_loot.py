"""Pins the shipped vanilla 1.19 pack's loot tables and advancements, the game facts, and
that the generator reproduces the shipped files (the recipes, tags and references are
pinned in test_vanilla_pack_files.py, whose file helpers this module shares)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_vanilla_pack_files import GAME, GENERATOR, MC, PACK, _load, items

# -- loot tables ---------------------------------------------------------------------------


def block_loot(name: str) -> dict[str, Any]:
    data: dict[str, Any] = _load(MC / "loot_tables" / "blocks" / f"{name}.json")
    return data


def counts(obj: Any) -> list[Any]:
    return [v for k, v in walk_dicts(obj) if k == "set_count"]


def walk_dicts(obj: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(obj, dict):
        if obj.get("function") == "minecraft:set_count":
            yield "set_count", obj["count"]
        for v in obj.values():
            yield from walk_dicts(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from walk_dicts(v)


def test_lapis_ore_drops_4_to_9_with_fortune() -> None:
    table = block_loot("lapis_ore")
    assert counts(table) == [{"type": "minecraft:uniform", "min": 4.0, "max": 9.0}]
    text = json.dumps(table)
    assert "minecraft:ore_drops" in text and "minecraft:silk_touch" in text


def test_ore_tables() -> None:
    iron = json.dumps(block_loot("iron_ore"))
    assert '"minecraft:raw_iron"' in iron and "minecraft:silk_touch" in iron
    assert counts(block_loot("copper_ore")) == [
        {"type": "minecraft:uniform", "min": 2.0, "max": 5.0}
    ]
    assert "uniform_bonus_count" in json.dumps(block_loot("redstone_ore"))
    assert '"minecraft:diamond"' in json.dumps(block_loot("deepslate_diamond_ore"))


def test_terrain_tables() -> None:
    stone = json.dumps(block_loot("stone"))
    assert '"minecraft:cobblestone"' in stone and "silk_touch" in stone
    assert '"minecraft:cobbled_deepslate"' in json.dumps(block_loot("deepslate"))
    assert '"minecraft:dirt"' in json.dumps(block_loot("grass_block"))
    gravel = json.dumps(block_loot("gravel"))
    assert "[0.1, 0.14285715, 0.25, 1.0]" in gravel and '"minecraft:flint"' in gravel
    assert counts(block_loot("clay")) == [4.0]
    assert counts(block_loot("snow_block")) == [4.0]
    assert counts(block_loot("bookshelf")) == [3.0]
    ice = block_loot("ice")["pools"][0]
    assert "silk_touch" in json.dumps(ice["conditions"])


def test_leaves_tables() -> None:
    oak = json.dumps(block_loot("oak_leaves"))
    assert '"minecraft:oak_sapling"' in oak and '"minecraft:apple"' in oak
    assert "[0.05, 0.0625, 0.083333336, 0.1]" in oak
    assert "[0.005, 0.0055555557, 0.00625, 0.008333334, 0.025]" in oak
    assert '"minecraft:apple"' not in json.dumps(block_loot("birch_leaves"))
    assert "0.027777778" in json.dumps(block_loot("jungle_leaves"))


def test_wall_variants_share_tables() -> None:
    blocks = _load(GAME / "blocks.json")
    assert blocks["minecraft:wall_torch"]["loot_table"] == "minecraft:blocks/torch"
    assert blocks["minecraft:oak_wall_sign"]["loot_table"] == "minecraft:blocks/oak_sign"
    assert not (MC / "loot_tables" / "blocks" / "wall_torch.json").exists()
    assert blocks["minecraft:bedrock"]["loot_table"] is None


def entity_pools(name: str) -> list[dict[str, Any]]:
    pools: list[dict[str, Any]] = _load(MC / "loot_tables" / "entities" / f"{name}.json")["pools"]
    return pools


def test_cow_drops() -> None:
    pools = entity_pools("cow")
    by_item = {p["entries"][0]["name"]: p["entries"][0]["functions"] for p in pools}
    assert by_item["minecraft:leather"][0]["count"] == {
        "type": "minecraft:uniform",
        "min": 0.0,
        "max": 2.0,
    }
    assert by_item["minecraft:beef"][0]["count"] == {
        "type": "minecraft:uniform",
        "min": 1.0,
        "max": 3.0,
    }
    assert any(f["function"] == "minecraft:furnace_smelt" for f in by_item["minecraft:beef"])
    assert any(f["function"] == "minecraft:looting_enchant" for f in by_item["minecraft:leather"])


def test_other_animals() -> None:
    assert entity_pools("pig")[0]["entries"][0]["name"] == "minecraft:porkchop"
    assert {p["entries"][0]["name"] for p in entity_pools("chicken")} == {
        "minecraft:feather",
        "minecraft:chicken",
    }
    white = entity_pools("sheep/white")
    assert white[0]["entries"][0]["name"] == "minecraft:white_wool"
    assert white[1]["entries"][0] == {
        "type": "minecraft:loot_table",
        "name": "minecraft:entities/sheep",
    }


# -- advancements --------------------------------------------------------------------------


def advancement(name: str) -> dict[str, Any]:
    data: dict[str, Any] = _load(MC / "advancements" / "story" / f"{name}.json")
    return data


def test_story_advancements() -> None:
    root = advancement("root")["criteria"]["crafting_table"]
    assert root["trigger"] == "minecraft:inventory_changed"
    assert root["conditions"]["items"] == [{"items": ["minecraft:crafting_table"]}]
    mine_stone = advancement("mine_stone")
    assert mine_stone["criteria"]["get_stone"]["conditions"]["items"] == [
        {"tag": "minecraft:stone_tool_materials"}
    ]
    armor = advancement("obtain_armor")
    assert armor["requirements"] == [
        ["iron_helmet", "iron_chestplate", "iron_leggings", "iron_boots"]
    ]
    enchant = advancement("enchant_item")["criteria"]["enchanted_item"]
    assert enchant == {"trigger": "minecraft:enchanted_item", "conditions": {}}
    for name in ("upgrade_tools", "smelt_iron", "iron_tools", "mine_diamond", "form_obsidian"):
        adv = advancement(name)
        parent = adv["parent"].split("/", 1)[1]
        assert (MC / "advancements" / "story" / f"{parent}.json").is_file()


# -- game facts ----------------------------------------------------------------------------


def test_game_facts() -> None:
    blocks = _load(GAME / "blocks.json")
    assert blocks["minecraft:stone"]["requires_tool"] is True
    assert blocks["minecraft:dirt"]["requires_tool"] is False
    assert blocks["minecraft:obsidian"]["hardness"] == 50.0
    assert items()["minecraft:stick"]["stack_size"] == 64
    tools = _load(GAME / "tools.json")
    assert tools["minecraft:iron_pickaxe"] == {
        "kind": "pickaxe",
        "tier": "iron",
        "tier_level": 2,
        "speed": 6.0,
        "attack_damage": 4.0,
        "attack_speed": 1.2,
        "durability": 250,
        "wear_mine": 1,
        "wear_hit": 2,
        "wear_instant_blocks": False,
    }
    assert tools["minecraft:wooden_sword"]["wear_mine"] == 2
    assert tools["minecraft:wooden_sword"]["correct_for"] == ["minecraft:cobweb"]
    assert tools["minecraft:shears"]["wear_instant_blocks"] is True
    assert tools["minecraft:shears"]["durability"] == 238
    entities = _load(GAME / "entities.json")
    assert entities["minecraft:cow"]["max_health"] == 10
    assert sum(entities["minecraft:sheep"]["variants"]["weights"].values()) == 50_000
    special = _load(GAME / "special_recipes.json")
    assert special["minecraft:crafting_special_firework_rocket"]["gunpowder_count"] == [1, 3]
    assert tools["minecraft:golden_pickaxe"]["speed"] == 12.0
    assert tools["minecraft:diamond_sword"]["attack_damage"] == 7.0
    fuels = _load(GAME / "fuels.json")["burn_time"]
    assert fuels["minecraft:coal"] == 1600 and fuels["#minecraft:planks"] == 300
    assert fuels["minecraft:lava_bucket"] == 20000 and fuels["minecraft:stick"] == 100
    ench = _load(GAME / "enchanting.json")
    assert ench["items"]["minecraft:iron_pickaxe"]["enchantability"] == 14
    assert set(ench["items"]["minecraft:iron_pickaxe"]["table_enchantments"]) == {
        "minecraft:efficiency",
        "minecraft:unbreaking",
        "minecraft:fortune",
        "minecraft:silk_touch",
    }
    assert ench["items"]["minecraft:book"]["enchantability"] == 1
    assert "minecraft:mending" not in ench["items"]["minecraft:book"]["table_enchantments"]


# -- generator -----------------------------------------------------------------------------


def _generate(tmp: Path, tag: str) -> tuple[Path, Path]:
    pack, game = tmp / f"pack_{tag}", tmp / f"game_{tag}"
    subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(pack), "--game-out", str(game)],
        check=True,
        capture_output=True,
    )
    return pack, game


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_generator_is_deterministic_and_matches_shipped_files(tmp_path: Path) -> None:
    pytest.importorskip("minecraft_data")
    pack_a, game_a = _generate(tmp_path, "a")
    pack_b, game_b = _generate(tmp_path, "b")
    assert _snapshot(pack_a) == _snapshot(pack_b)
    assert _snapshot(game_a) == _snapshot(game_b)
    assert _snapshot(pack_a) == _snapshot(PACK), "shipped pack is stale: rerun the generator"
    assert _snapshot(game_a) == _snapshot(GAME), "shipped game facts are stale"
