"""A tiny, self-contained game-data folder and datapack for rules-engine tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ITEMS = [
    "oak_log",
    "birch_log",
    "oak_planks",
    "birch_planks",
    "stick",
    "crafting_table",
    "cobblestone",
    "stone",
    "wooden_pickaxe",
    "stone_pickaxe",
    "iron_ore",
    "raw_iron",
    "iron_ingot",
    "coal",
    "diamond",
    "paper",
    "leather",
    "book",
    "sugar_cane",
    "beef",
    "cooked_beef",
    "enchanted_book",
    "furnace",
    "torch",
]
BLOCKS = [
    "oak_log",
    "birch_log",
    "stone",
    "cobblestone",
    "iron_ore",
    "crafting_table",
    "sugar_cane",
]


def write_json(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, sort_keys=True))


def make_game(root: Path) -> Path:
    game = root / "game"
    write_json(game / "items.json", {i: {"stack_size": 64, "display_name": i} for i in ITEMS})
    blocks = {
        b: {
            "hardness": 1.0,
            "requires_tool": b in ("stone", "cobblestone", "iron_ore"),
            "diggable": True,
        }
        for b in BLOCKS
    }
    write_json(game / "blocks.json", blocks)
    write_json(
        game / "tools.json",
        {
            "wooden_pickaxe": {"kind": "pickaxe", "tier": "wood", "tier_level": 0},
            "stone_pickaxe": {"kind": "pickaxe", "tier": "stone", "tier_level": 1},
        },
    )
    write_json(
        game / "fuels.json",
        {"burn_time": {"minecraft:coal": 1600, "#minecraft:planks": 300}, "never_fuel": []},
    )
    write_json(game / "enchanting.json", {})
    return game


def make_pack(root: Path, name: str, files: dict[str, Any], pack_format: int = 10) -> Path:
    pack = root / name
    write_json(pack / "pack.mcmeta", {"pack": {"pack_format": pack_format, "description": name}})
    for rel, doc in files.items():
        path = pack / rel
        if isinstance(doc, str):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(doc)
        else:
            write_json(path, doc)
    return pack


def base_files() -> dict[str, Any]:
    r = "data/minecraft/recipes/"
    t = "data/minecraft/tags/"
    return {
        t + "items/planks.json": {"values": ["minecraft:oak_planks", "minecraft:birch_planks"]},
        t + "items/oak_logs.json": {"values": ["minecraft:oak_log"]},
        t + "blocks/mineable/pickaxe.json": {
            "values": ["minecraft:stone", "minecraft:cobblestone", "minecraft:iron_ore"]
        },
        t + "blocks/needs_stone_tool.json": {"values": ["minecraft:iron_ore"]},
        r + "oak_planks.json": {
            "type": "minecraft:crafting_shapeless",
            "ingredients": [{"tag": "minecraft:oak_logs"}],
            "result": {"item": "minecraft:oak_planks", "count": 4},
        },
        r + "stick.json": {
            "type": "minecraft:crafting_shaped",
            "pattern": ["#", "#"],
            "key": {"#": {"tag": "minecraft:planks"}},
            "result": {"item": "minecraft:stick", "count": 4},
        },
        r + "wooden_pickaxe.json": {
            "type": "minecraft:crafting_shaped",
            "pattern": ["XXX", " # ", " # "],
            "key": {"#": {"item": "minecraft:stick"}, "X": {"tag": "minecraft:planks"}},
            "result": {"item": "minecraft:wooden_pickaxe"},
        },
        r + "torch.json": {
            "type": "minecraft:crafting_shaped",
            "pattern": ["X ", "# "],
            "key": {"#": {"item": "minecraft:stick"}, "X": [{"item": "minecraft:coal"}]},
            "result": {"item": "minecraft:torch", "count": 4},
        },
        r + "book.json": {
            "type": "minecraft:crafting_shapeless",
            "ingredients": [{"item": "minecraft:paper"}] * 3 + [{"item": "minecraft:leather"}],
            "result": {"item": "minecraft:book"},
        },
        r + "iron_ingot_from_smelting_raw_iron.json": {
            "type": "minecraft:smelting",
            "ingredient": {"item": "minecraft:raw_iron"},
            "result": "minecraft:iron_ingot",
            "experience": 0.7,
            "cookingtime": 200,
        },
        r + "cooked_beef.json": {
            "type": "minecraft:smelting",
            "ingredient": {"item": "minecraft:beef"},
            "result": "minecraft:cooked_beef",
            "experience": 0.35,
            "cookingtime": 200,
        },
        "data/minecraft/loot_tables/blocks/iron_ore.json": {
            "type": "minecraft:block",
            "pools": [
                {
                    "rolls": 1,
                    "entries": [
                        {
                            "type": "minecraft:alternatives",
                            "children": [
                                {
                                    "type": "minecraft:item",
                                    "name": "minecraft:iron_ore",
                                    "conditions": [
                                        {
                                            "condition": "minecraft:match_tool",
                                            "predicate": {
                                                "enchantments": [
                                                    {
                                                        "enchantment": "minecraft:silk_touch",
                                                        "levels": {"min": 1},
                                                    }
                                                ]
                                            },
                                        }
                                    ],
                                },
                                {
                                    "type": "minecraft:item",
                                    "name": "minecraft:raw_iron",
                                    "functions": [
                                        {
                                            "function": "minecraft:apply_bonus",
                                            "enchantment": "minecraft:fortune",
                                            "formula": "minecraft:ore_drops",
                                        },
                                        {"function": "minecraft:explosion_decay"},
                                    ],
                                },
                            ],
                        }
                    ],
                }
            ],
        },
        "data/minecraft/advancements/story/smelt_iron.json": {
            "criteria": {
                "iron": {
                    "trigger": "minecraft:inventory_changed",
                    "conditions": {"items": [{"items": ["minecraft:iron_ingot"]}]},
                }
            },
            "display": {"title": {"translate": "advancements.story.smelt_iron.title"}},
        },
    }
