"""Loading, layering and error reporting of datapacks, on a tiny synthetic game."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.rules.game import load_game_data
from mirrorcraft.rules.pack import load_pack
from mirrorcraft.rules.ruleset import RuleSet
from tests.minipack import base_files, make_game, make_pack


@pytest.fixture()
def game(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_game_data(make_game(tmp_path))


@pytest.fixture()
def base(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_pack(make_pack(tmp_path, "base", base_files()))


def test_base_pack_crafts_and_smelts(game, base) -> None:  # type: ignore[no-untyped-def]
    rs = RuleSet.load(base=base, game=game)
    out = rs.craft((("oak_log", None), (None, None)), "inventory")
    assert out is not None and (out.item, out.count) == ("oak_planks", 4)
    assert rs.cooking("raw_iron", "furnace") is not None
    assert rs.cooking("raw_iron", "smoker") is None
    assert rs.fuel_ticks("birch_planks") == 300 and rs.fuel_ticks("stick") == 0


def test_later_pack_replaces_the_same_resource_location(tmp_path: Path, game, base) -> None:  # type: ignore[no-untyped-def]
    override = make_pack(
        tmp_path,
        "scarce",
        {
            "data/minecraft/recipes/oak_planks.json": {
                "type": "minecraft:crafting_shapeless",
                "ingredients": [{"tag": "minecraft:oak_logs"}],
                "result": {"item": "minecraft:oak_planks", "count": 2},
            }
        },
    )
    vanilla = RuleSet.load(base=base, game=game)
    mirror = RuleSet.load([override], base=base, game=game)
    grid = ((None, "oak_log"), (None, None))
    assert vanilla.craft(grid, "inventory").count == 4  # type: ignore[union-attr]
    assert mirror.craft(grid, "inventory").count == 2  # type: ignore[union-attr]
    # Exactly that outcome changed: sticks are unaffected, and the fingerprints differ.
    sticks = (("oak_planks",), ("birch_planks",))
    assert vanilla.craft(sticks, "inventory") == mirror.craft(sticks, "inventory")
    assert vanilla.fingerprint != mirror.fingerprint
    assert mirror.sources[("recipes", "minecraft:oak_planks")] == "scarce"


def test_tags_merge_unless_replace(tmp_path: Path, game, base) -> None:  # type: ignore[no-untyped-def]
    add = make_pack(
        tmp_path,
        "add",
        {"data/minecraft/tags/items/oak_logs.json": {"values": ["minecraft:birch_log"]}},
    )
    rep = make_pack(
        tmp_path,
        "rep",
        {
            "data/minecraft/tags/items/oak_logs.json": {
                "replace": True,
                "values": ["minecraft:birch_log"],
            }
        },
    )
    assert RuleSet.load([add], base=base, game=game).item_tags["oak_logs"] == {
        "oak_log",
        "birch_log",
    }
    assert RuleSet.load([rep], base=base, game=game).item_tags["oak_logs"] == {"birch_log"}


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ({"data/minecraft/recipes/bad.json": "{not json"}, "line 1: not valid JSON"),
        (
            {
                "data/minecraft/recipes/bad.json": {
                    "type": "minecraft:crafting_shaped",
                    "pattern": ["#"],
                    "key": {},
                    "result": {"item": "minecraft:stick"},
                }
            },
            "undefined symbol",
        ),
        (
            {
                "data/minecraft/recipes/bad.json": {
                    "type": "minecraft:crafting_shapeless",
                    "ingredients": [{"item": "minecraft:unobtainium"}],
                    "result": {"item": "minecraft:stick"},
                }
            },
            "unknown item 'unobtainium'",
        ),
        ({"data/minecraft/recipes/bad.json": {"type": "minecraft:weird"}}, "unknown recipe type"),
        (
            {
                "data/minecraft/loot_tables/blocks/stone.json": {
                    "pools": [
                        {
                            "rolls": 1,
                            "entries": [
                                {
                                    "type": "minecraft:item",
                                    "name": "minecraft:stone",
                                    "functions": [{"function": "minecraft:set_nbt", "tag": "{}"}],
                                }
                            ],
                        }
                    ]
                }
            },
            "set_nbt",
        ),
        (
            {
                "data/minecraft/loot_tables/blocks/stone.json": {
                    "pools": [
                        {
                            "rolls": 1,
                            "entries": [
                                {
                                    "type": "minecraft:item",
                                    "name": "minecraft:stone",
                                    "conditions": [{"condition": "minecraft:weather_check"}],
                                }
                            ],
                        }
                    ]
                }
            },
            "weather_check",
        ),
        (
            {"data/minecraft/tags/items/planks.json": {"values": ["#minecraft:nope"]}},
            "no pack defines",
        ),
        (
            {
                "data/minecraft/advancements/x.json": {
                    "criteria": {"a": {"trigger": "minecraft:made_up"}}
                }
            },
            "not a 1.19 trigger",
        ),
    ],
)
def test_broken_pack_fails_with_file_and_reason(
    tmp_path: Path, game, base, files, fragment
) -> None:  # type: ignore[no-untyped-def]
    bad = make_pack(tmp_path, "broken", files)
    with pytest.raises(DatapackError) as info:
        RuleSet.load([bad], base=base, game=game)
    message = str(info.value)
    assert fragment in message
    assert "broken" in message  # the pack is named
    assert "data/minecraft/" in message or "tags/" in message  # and the file


def test_unknown_pack_format_and_missing_meta(tmp_path: Path) -> None:
    with pytest.raises(DatapackError, match="pack_format 15"):
        load_pack(make_pack(tmp_path, "new", {}, pack_format=15))
    empty = tmp_path / "nometa"
    (empty / "data").mkdir(parents=True)
    with pytest.raises(DatapackError, match=r"no pack\.mcmeta"):
        load_pack(empty)


def test_zip_pack_loads_and_bad_zip_is_reported(tmp_path: Path, game, base) -> None:  # type: ignore[no-untyped-def]
    folder = make_pack(
        tmp_path,
        "zipped",
        {"data/minecraft/tags/items/oak_logs.json": {"values": ["minecraft:birch_log"]}},
    )
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(folder).as_posix())
    rs = RuleSet.load([archive], base=base, game=game)
    assert "birch_log" in rs.item_tags["oak_logs"]
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    with pytest.raises(DatapackError, match="not a readable zip"):
        load_pack(junk)


def test_two_rulesets_live_side_by_side(tmp_path: Path, game, base) -> None:  # type: ignore[no-untyped-def]
    override = make_pack(
        tmp_path,
        "o",
        {
            "data/minecraft/recipes/book.json": {
                "type": "minecraft:crafting_shapeless",
                "ingredients": [{"item": "minecraft:paper"}] * 3 + [{"item": "minecraft:leather"}],
                "result": {"item": "minecraft:diamond"},
            }
        },
    )
    a = RuleSet.load(base=base, game=game)
    b = RuleSet.load([override], base=base, game=game)
    grid = (("paper", "paper"), ("paper", "leather"))
    assert a.craft(grid, "inventory").item == "book"  # type: ignore[union-attr]
    assert b.craft(grid, "inventory").item == "diamond"  # type: ignore[union-attr]
    assert a.craft(grid, "inventory").item == "book"  # type: ignore[union-attr]
