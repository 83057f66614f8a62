"""Catalogs and static reports of the construction workflow (no model involved)."""

from __future__ import annotations

from typing import Any

import pytest

from mirrorcraft.datapack.suites import find_suite, list_suites
from mirrorcraft.design.biome_catalog import biome_catalog
from mirrorcraft.design.biome_report import biome_report
from mirrorcraft.design.mirror_catalog import mirror_catalog
from mirrorcraft.design.mirror_report import mirror_report
from mirrorcraft.design.report import StaticReport
from mirrorcraft.world.registry import biome_spec

ALL = ("iron_armor", "diamond", "enchantment")
TWO = ("iron_armor", "diamond")


def suite(
    *changes: dict[str, Any], tasks: tuple[str, ...] = TWO, id: str = "D01"
) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "kind": "mirror",
        "id": id,
        "name": "Test suite",
        "selected_tasks": list(tasks),
        "changes": list(changes),
    }


IRON_DIRT = {
    "op": "block_drops",
    "targets": ["iron_ore", "deepslate_iron_ore"],
    "mode": "replace",
    "drops": [{"item": "dirt", "count": 1}],
    "sheet": "Iron ore of both kinds drops a block of dirt.",
}
LOG_PLANKS = {
    "op": "block_drops",
    "targets": ["#minecraft:logs"],
    "mode": "replace",
    "drops": [{"item": "{crafted}", "count": 4}],
    "sheet": "Breaking a log drops 4 planks of its kind.",
}


def codes(report: StaticReport, hard: bool = True) -> set[str]:
    return {f.code for f in (report.hard_failures if hard else report.warnings)}


@pytest.mark.parametrize("suite_id", [m.id for m in list_suites()])
def test_the_six_packaged_suites_pass_the_static_report(suite_id: str) -> None:
    manifest = find_suite(suite_id)
    assert manifest is not None
    found = mirror_report(manifest, ALL, allow_packaged=True)
    assert found.report.compiled
    assert found.report.hard_failures == [], found.report.hard_failures
    sections = found.report.sections
    assert all(t["route_in_every_world"] for t in sections["tasks"].values())
    assert all(c["relevant_to"] for c in sections["changes"])


def test_encounterability_levels_follow_their_definitions() -> None:
    levels = {
        m.id: [
            c["encounter"]
            for c in mirror_report(m, ALL, allow_packaged=True).report.sections["changes"]
        ]
        for m in list_suites()
    }
    assert levels["M02"][0] == "witness"  # logs are broken on every familiar route
    assert levels["M05"][3:] == ["mirror_route", "mirror_route"]  # smelting the substituted hoes
    assert all(level != "none" for per_suite in levels.values() for level in per_suite)


def test_an_iron_ore_that_drops_dirt_leaves_iron_tasks_without_a_route() -> None:
    report = mirror_report(suite(IRON_DIRT), TWO).report
    assert report.compiled and not report.ok
    missing = {(f.task, f.world) for f in report.hard_failures if f.code == "no_route"}
    assert {t for t, _w in missing} == {"iron_armor", "diamond"}
    assert len(missing) == 20  # both tasks, all ten worlds


def test_a_change_shadowed_by_another_is_reported() -> None:
    planks = {
        "op": "recipe_output",
        "select": {"result_tag": "planks", "type": "crafting_shapeless"},
        "count": 2,
        "sheet": "A log crafts into 2 planks of its kind.",
    }
    report = mirror_report(suite(LOG_PLANKS, planks), TWO).report
    assert report.ok
    assert [c["encounter"] for c in report.sections["changes"]] == ["witness", "shadowed"]
    assert "shadowed" in codes(report, hard=False)


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({**IRON_DIRT, "drops": [{"item": "no_such_item", "count": 1}]}, "invalid_spec"),
        ({**IRON_DIRT, "op": "teleport"}, "invalid_spec"),
        ({**IRON_DIRT, "targets": ["mycelium"]}, "not_in_catalog"),
        ({**IRON_DIRT, "drops": [{"item": "elytra", "count": 1}]}, "not_in_catalog"),
        (
            {
                "op": "recipe_output",
                "targets": ["minecraft:stick"],
                "count": 4,
                "sheet": "Sticks as usual, four.",
            },
            "no_effect",
        ),
        (
            {
                "op": "block_drops",
                "targets": ["oak_leaves"],
                "mode": "add",
                "drops": [{"item": "stick", "count": 1}],
                "sheet": "Oak leaves also drop a stick.",
            },
            "touches_neutral_script",
        ),
        (
            {
                "op": "block_drops",
                "targets": ["granite"],
                "mode": "replace",
                "drops": [{"item": "andesite", "count": 1}],
                "sheet": "Granite drops andesite.",
            },
            "off_route",
        ),
        ({**IRON_DIRT, "sheet": "Ore."}, "missing_sheet"),  # too short to tell a rule
        ({**IRON_DIRT, "sheet": ""}, "invalid_spec"),  # the manifest refuses an empty line
        # Text that is no resource id at all, as a designer may write it.
        ({**IRON_DIRT, "targets": [""]}, "not_in_catalog"),
        ({**IRON_DIRT, "targets": ["#"]}, "not_in_catalog"),
        ({**IRON_DIRT, "drops": [{"item": "Iron Ingot!", "count": 1}]}, "not_in_catalog"),
        (
            {
                "op": "recipe_output",
                "select": {"result_tag": "#minecraft:no such tag"},
                "count": 2,
                "sheet": "Planks come two to a log.",
            },
            "not_in_catalog",
        ),
        (
            {
                "op": "cooking_result",
                "input": "raw iron",
                "stations": ["furnace"],
                "item": "iron_ingot",
                "sheet": "Raw iron smelts as ever.",
            },
            "not_in_catalog",
        ),
        (
            {"op": "entity_loot", "target": "", "drops": [{"item": "leather"}], "sheet": "x" * 20},
            "not_in_catalog",
        ),
        (
            {
                "op": "recipe_output",
                "targets": ["minecraft:oak_planks"],
                "count": 2,
                "sheet": "Oak logs give 2 planks.",
            },
            "off_route",
        ),
    ],
)
def test_bad_candidates_get_hard_failures_not_exceptions(change: dict[str, Any], code: str) -> None:
    report = mirror_report(suite(LOG_PLANKS, change), TWO).report
    assert code in codes(report)
    assert not report.ok


def test_a_result_tag_may_be_written_with_a_hash_like_a_block_tag() -> None:
    planks = {
        "op": "recipe_output",
        "select": {"result_tag": "#minecraft:planks", "type": "crafting_shapeless"},
        "count": 2,
        "sheet": "A log crafts into 2 planks of its kind.",
    }
    plain = mirror_report(
        suite({**planks, "select": {**planks["select"], "result_tag": "planks"}}), TWO
    )
    hashed = mirror_report(suite(planks), TWO)
    assert hashed.report.compiled and "not_in_catalog" not in codes(hashed.report)
    assert hashed.suite is not None and plain.suite is not None
    assert hashed.suite.zip_bytes() == plain.suite.zip_bytes()


def test_ids_and_selected_tasks_are_checked() -> None:
    assert "bad_id" in codes(mirror_report(suite(LOG_PLANKS, id="M03"), TWO).report)
    assert "bad_id" in codes(mirror_report(suite(LOG_PLANKS, id="oak"), TWO).report)
    report = mirror_report(suite(LOG_PLANKS, tasks=("iron_armor",)), TWO).report
    assert "task_mismatch" in codes(report)
    assert "invalid_spec" in codes(mirror_report("not a mapping", TWO).report)


def test_the_report_is_deterministic_and_json_ready() -> None:
    a = mirror_report(suite(LOG_PLANKS), TWO).report.to_json()
    b = mirror_report(suite(LOG_PLANKS), TWO).report.to_json()
    assert a == b and a["passed"] and a["kind"] == "mirror"


def test_the_mirror_catalog_is_generated_from_routes() -> None:
    cat = mirror_catalog(ALL)
    assert {"minecraft:iron_pickaxe", "minecraft:furnace", "minecraft:book"} <= set(cat.crafting)
    assert cat.crafting["minecraft:iron_pickaxe"].role == "route"
    assert cat.crafting["minecraft:iron_hoe"].role == "neighbour"
    assert cat.crafting["minecraft:iron_helmet"].role == "variant"  # the witness makes boots
    assert "minecraft:oak_door" not in cat.crafting  # decorative neighbours are left out
    assert {"iron_ore", "deepslate_coal_ore", "sugar_cane"} <= set(cat.blocks)
    assert cat.entities["cow"]["route"]
    assert "raw_iron" in cat.route_items and "netherite_pickaxe" in cat.outputs
    assert "logs" in cat.block_tags and "planks" in cat.result_tags
    prompt = cat.to_prompt()
    assert prompt["operators"]["block_drops"]["drops[].count"] == {
        "type": "int",
        "default": 1,
        "min": 1,
        "max": 64,
    }
    iron_only = mirror_catalog(("iron_armor",))
    assert "minecraft:book" not in iron_only.crafting  # only the selected tasks' routes


def test_the_biome_catalog_has_bounds_from_the_schema() -> None:
    prompt = biome_catalog(ALL).to_prompt()
    assert prompt["bounds"]["terrain.relief"]["max"] == 24.0
    assert prompt["bounds"]["ores[].veins_per_chunk"]["max"] == 40.0
    assert set(prompt["base_biomes"]) == {"plains", "taiga", "snowy_plains", "jungle", "savanna"}
    assert {"block": "diamond_ore", "deepslate_block": "deepslate_diamond_ore"} in prompt["ores"]
    assert "cow" in prompt["creatures"]
    assert "mob" not in str(prompt["required_resources"]["enchantment"])
    assert any("sugar_cane" in s for s in prompt["required_resources"]["enchantment"])


@pytest.mark.parametrize("base", ["plains", "snowy_plains"])
def test_packaged_biomes_pass_the_biome_report(base: str) -> None:
    found = biome_report(biome_spec(base), ALL, base, worlds=1)
    assert found.report.ok, found.report.hard_failures
    world = found.report.sections["worlds"][0]
    assert {"raw_iron", "diamond", "obsidian", "sugar_cane", "leather"} <= set(world["resources"])


def test_a_biome_without_diamonds_or_cows_fails() -> None:
    doc = biome_spec("plains").model_dump(mode="json")
    doc["ores"] = [b for b in doc["ores"] if "diamond" not in b["block"]]
    doc["mobs"] = [m for m in doc["mobs"] if m["type"] != "cow"]
    report = biome_report(doc, ALL, "plains", worlds=1).report
    assert report.compiled and not report.ok
    assert {"no_route"} <= codes(report)
    assert {f.task for f in report.hard_failures} >= {"diamond", "enchantment"}


def test_bad_biome_specs_are_invalid_not_crashes() -> None:
    doc = biome_spec("plains").model_dump(mode="json")
    bad_herd = {**doc, "mobs": [{"type": "cow", "count": [4, 6], "herd_size": [0, 0]}]}
    assert "invalid_spec" in codes(biome_report(bad_herd, ALL, "plains").report)
    alien = {**doc, "terrain": {**doc["terrain"], "top_block": "netherrack"}}
    assert "invalid_spec" in codes(biome_report(alien, ALL, "plains").report)
    assert "invalid_spec" in codes(biome_report({"biome": "x"}, ALL, "plains").report)
