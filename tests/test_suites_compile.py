"""Suite manifests: validation, deterministic compilation, sheets, and route-breaking edits rejected."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from mirrorcraft.backends.rulesets import UnknownRuleSetError, resolve_rules
from mirrorcraft.cli import main
from mirrorcraft.datapack.compiler import compile_manifest
from mirrorcraft.datapack.manifest import ManifestError, parse_manifest
from mirrorcraft.datapack.suites import compiled, list_suites
from mirrorcraft.rules.pack import load_pack
from mirrorcraft.rules.ruleset import RuleSet, vanilla_ruleset


def test_six_suites_compile_deterministically_to_valid_packs(tmp_path: Path) -> None:
    suites = list_suites()
    assert [m.id for m in suites] == ["M01", "M02", "M03", "M04", "M05", "M06"]
    for m in suites:
        a = compile_manifest(m, vanilla_ruleset()).zip_bytes()
        b = compile_manifest(m, vanilla_ruleset()).zip_bytes()
        assert a == b
        with zipfile.ZipFile(io.BytesIO(a)) as zf:
            meta = json.loads(zf.read("pack.mcmeta"))
            assert meta["pack"]["pack_format"] == 10 and m.id in meta["pack"]["description"]
            assert all(n.startswith("data/") or n == "pack.mcmeta" for n in zf.namelist())
        path = tmp_path / f"{m.id}.zip"
        path.write_bytes(a)
        rs = RuleSet.load([load_pack(path)])  # the zip itself loads as a datapack
        assert rs.fingerprint == resolve_rules(m.id).fingerprint
        assert len(compiled(m).sheet) == len(m.changes)


def test_overrides_sit_at_vanilla_resource_locations() -> None:
    files = compiled(next(m for m in list_suites() if m.id == "M01")).files
    assert "data/minecraft/recipes/oak_planks.json" in files
    assert "data/minecraft/recipes/crimson_planks.json" in files  # stems count as logs here
    assert "data/minecraft/recipes/stick.json" in files
    assert "data/minecraft/recipes/iron_ingot_from_blasting_raw_iron.json" in files
    m05 = compiled(next(m for m in list_suites() if m.id == "M05")).files
    nugget = m05["data/minecraft/recipes/iron_nugget_from_smelting.json"]
    assert {"item": "minecraft:iron_hoe"} not in nugget[
        "ingredient"
    ]  # the hoe no longer smelts to a nugget
    assert "data/mirrorcraft/recipes/iron_pickaxe_from_smelting_iron_hoe.json" in m05


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (
            {"op": "recipe_outptu", "targets": ["minecraft:stick"], "count": 1, "sheet": "x"},
            "unknown operator",
        ),
        (
            {"op": "recipe_output", "targets": ["minecraft:no_such"], "count": 1, "sheet": "x"},
            "no vanilla crafting recipe",
        ),
        ({"op": "recipe_output", "targets": ["minecraft:stick"], "sheet": "x"}, "must change"),
        (
            {
                "op": "block_drops",
                "targets": ["not_a_block"],
                "mode": "add",
                "drops": [{"item": "dirt"}],
                "sheet": "x",
            },
            "unknown block",
        ),
        (
            {
                "op": "block_drops",
                "targets": ["stone"],
                "mode": "add",
                "drops": [{"item": "unobtainium"}],
                "sheet": "x",
            },
            "unknown item",
        ),
        (
            {"op": "entity_loot", "target": "dragon", "drops": [{"item": "dirt"}], "sheet": "x"},
            "no vanilla loot table",
        ),
        (
            {
                "op": "cooking_result",
                "input": "raw_iron",
                "stations": ["campfire"],
                "item": "dirt",
                "sheet": "x",
            },
            "stations",
        ),
        # Not resource ids at all: a message naming the change, not a bare ValueError.
        (
            {
                "op": "block_drops",
                "targets": [""],
                "mode": "add",
                "drops": [{"item": "dirt"}],
                "sheet": "x",
            },
            r"changes\[0\]: not a valid resource id",
        ),
        (
            {
                "op": "block_drops",
                "targets": ["#"],
                "mode": "add",
                "drops": [{"item": "dirt"}],
                "sheet": "x",
            },
            r"changes\[0\]: not a valid resource id",
        ),
        (
            {"op": "recipe_output", "targets": ["Oak Planks"], "count": 2, "sheet": "x"},
            r"changes\[0\]: not a valid resource id",
        ),
        (
            {"op": "recipe_output", "select": {"result_tag": "#"}, "count": 2, "sheet": "x"},
            r"changes\[0\]: not a valid resource id",
        ),
        (
            {"op": "entity_loot", "target": "a cow", "drops": [{"item": "dirt"}], "sheet": "x"},
            r"changes\[0\]: not a valid resource id",
        ),
    ],
)
def test_bad_manifests_are_rejected_with_a_message(
    change: dict[str, object], fragment: str
) -> None:
    raw = {"schema_version": 1, "id": "X1", "name": "bad", "changes": [change]}
    with pytest.raises(ManifestError, match=fragment):
        compile_manifest(parse_manifest(raw), vanilla_ruleset())


STICKS_AS_USUAL = {"op": "recipe_output", "targets": ["stick"], "count": 4, "sheet": "x"}


@pytest.mark.parametrize(
    "changes",
    [
        [STICKS_AS_USUAL],
        [
            {
                "op": "cooking_result",
                "input": "raw_iron",
                "stations": ["furnace"],
                "item": "iron_ingot",
                "sheet": "x",
            }
        ],
        [{**STICKS_AS_USUAL, "count": 2}, {**STICKS_AS_USUAL, "count": 2}],
    ],
)
def test_a_change_that_changes_nothing_is_rejected(
    tmp_path: Path, changes: list[dict[str, object]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Such a suite used to check, compile and run as a Mirror condition identical to
    vanilla ("0 resource(s) differ from vanilla", exit 0)."""
    raw = {"schema_version": 1, "id": "SAME", "name": "as before", "changes": changes}
    last = len(changes) - 1
    with pytest.raises(ManifestError, match=rf"changes\[{last}\]: changes nothing"):
        compiled(parse_manifest(raw))
    path = tmp_path / "same.yaml"
    path.write_text(json.dumps(raw))
    assert main(["suites", "check", str(path)]) == 2
    assert "changes nothing" in capsys.readouterr().err


def test_unknown_keys_and_versions_are_rejected() -> None:
    with pytest.raises(ManifestError, match="schema_version"):
        parse_manifest({"schema_version": 2, "id": "X", "name": "n", "changes": []})
    with pytest.raises(ManifestError, match=r"colour.*not permitted"):
        parse_manifest(
            {
                "id": "X",
                "name": "n",
                "colour": "red",
                "changes": [
                    {"op": "recipe_output", "targets": ["stick"], "count": 1, "sheet": "x"}
                ],
            }
        )


def test_a_route_breaking_manifest_is_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "no_iron.yaml"
    path.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "id": "NOIRON",
                "name": "No iron",
                "changes": [
                    {
                        "op": "block_drops",
                        "targets": ["iron_ore", "deepslate_iron_ore"],
                        "mode": "replace",
                        "drops": [{"item": "dirt"}],
                        "sheet": "Iron ores drop dirt.",
                    }
                ],
            }
        )
    )
    with pytest.raises(UnknownRuleSetError, match="breaks a task route"):
        resolve_rules(str(path))
    assert main(["suites", "check", str(path)]) == 1
    assert "NO ROUTE" in capsys.readouterr().out


def test_suites_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suites", "list"]) == 0
    assert "M04" in capsys.readouterr().out
    assert main(["suites", "show", "M04"]) == 0
    assert "block of raw iron" in capsys.readouterr().out
    assert main(["suites", "build", "--out", str(tmp_path), "M02"]) == 0
    assert (tmp_path / "M02.zip").exists() and (tmp_path / "M02.sheet.txt").exists()
    assert main(["suites", "check", str(tmp_path / "M02.zip")]) == 0
    assert main(["suites", "check", "M05"]) == 0
    assert main(["suites", "show", "M99"]) == 2
    capsys.readouterr()
    for action in (["show"], ["build", "--out", str(tmp_path)]):  # not "is a directory"
        for pack in (tmp_path / "M02.zip", tmp_path):
            assert main(["suites", *action, str(pack)]) == 2
            assert "is a datapack" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        ({"selected_tasks": ["iron_armour"]}, "field 'selected_tasks': unknown task 'iron_armour'"),
        ({"selected_tasks": []}, "field 'selected_tasks'"),
        ({"sheet": ""}, "sheet"),
    ],
    ids=["misspelt task", "no task", "empty sheet line"],
)
def test_a_manifest_with_an_unknown_task_or_an_empty_sheet_line_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: dict[str, object], fragment: str
) -> None:
    """A misspelt selected task ended `suites check` and `play --suite` in an UnknownTaskError
    traceback; no task at all checked no route and passed; an empty sheet line gave the
    disclosed agent a numbered rule with nothing in it."""
    doc: dict[str, object] = {
        "id": "X01",
        "name": "x",
        "changes": [
            {
                "op": "recipe_output",
                "targets": ["minecraft:stick"],
                "count": 1,
                "sheet": edit.get("sheet", "Two planks make one stick."),
            }
        ],
    }
    if "selected_tasks" in edit:
        doc["selected_tasks"] = edit["selected_tasks"]
    with pytest.raises(ManifestError, match=fragment):
        parse_manifest(doc, "x.yaml")
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc))
    path = path.rename(tmp_path / "x.manifest.json")
    assert main(["suites", "check", str(path)]) == 2
    assert fragment in capsys.readouterr().err


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [(5, "field 'changes'"), ([{"op": []}], "unknown operator []")],
    ids=["changes a number", "op a list"],
)
def test_a_malformed_change_list_is_a_manifest_error(changes: object, fragment: str) -> None:
    """These raised TypeError (a traceback through the CLI) before validation ran."""
    with pytest.raises(ManifestError) as info:
        parse_manifest({"id": "X1", "name": "n", "changes": changes})
    assert fragment in str(info.value)
