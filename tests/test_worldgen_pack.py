"""Worldgen datapacks: every packaged biome and suite pack passes structural validation;
bytes are deterministic; broken files are reported with their file and field."""

from __future__ import annotations

import copy
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.datapack.suites import compiled, list_suites
from mirrorcraft.world.registry import biome_spec
from mirrorcraft.worldgen import (
    PACK_FORMAT,
    compile_biome_pack,
    packaged_biome_packs,
    validate_pack,
    validate_zip,
)
from mirrorcraft.worldgen.check_rules import EXTENSION_WARNING
from mirrorcraft.worldgen.validate import validate_path

BIOMES = ["jungle", "plains", "savanna", "snowy_plains", "taiga"]


def test_every_biome_pack_passes_validation_without_warnings() -> None:
    packs = packaged_biome_packs()
    assert [p.biome for p in packs] == BIOMES
    for pack in packs:
        report = validate_pack(pack.file_bytes())
        assert report.ok and not report.warnings, report.render()
        assert validate_zip(pack.zip_bytes()).ok


@pytest.mark.parametrize("suite", [m.id for m in list_suites()])
def test_every_suite_pack_passes_validation(suite: str) -> None:
    manifest = next(m for m in list_suites() if m.id == suite)
    report = validate_zip(compiled(manifest).zip_bytes())
    assert report.ok, report.render()
    # The only warnings are the cooking-count extension, and only where the suite uses it.
    assert all(w.message == EXTENSION_WARNING for w in report.warnings)
    assert bool(report.warnings) == (suite in ("M01", "M03"))


def test_the_vanilla_rules_pack_passes_the_rule_checks() -> None:
    folder = Path(__file__).parents[1] / "src" / "mirrorcraft" / "data" / "packs" / "vanilla"
    report = validate_path(folder)
    assert report.ok, report.render()[:2000]
    assert report.files > 1800


def test_pack_bytes_are_deterministic_and_canonical() -> None:
    spec = biome_spec("plains")
    a, b = compile_biome_pack(spec).zip_bytes(), compile_biome_pack(spec).zip_bytes()
    assert a == b
    with zipfile.ZipFile(io.BytesIO(a)) as zf:
        names = zf.namelist()
        assert names == sorted(names)
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        for name in names:
            if name.endswith(".json") or name == "pack.mcmeta":
                raw = zf.read(name).decode()
                assert raw == json.dumps(json.loads(raw), indent=2, sort_keys=True) + "\n"
    other = compile_biome_pack(spec.model_copy(update={"spec_version": "1.1"}))
    assert other.zip_bytes() != a and other.spec_hash != compile_biome_pack(spec).spec_hash


def test_pack_structure_matches_the_spec() -> None:
    spec = biome_spec("snowy_plains")
    pack = compile_biome_pack(spec)
    files = pack.files
    meta = files["pack.mcmeta"]
    assert meta["pack"]["pack_format"] == PACK_FORMAT == 10
    assert meta["mirrorcraft"]["world_preset"] == pack.preset_id == "mirrorcraft:snowy_plains"
    preset = files["data/mirrorcraft/worldgen/world_preset/snowy_plains.json"]
    overworld = preset["dimensions"]["minecraft:overworld"]["generator"]
    assert overworld["biome_source"] == {
        "type": "minecraft:fixed",
        "biome": "mirrorcraft:snowy_plains",
    }
    assert overworld["settings"] == "mirrorcraft:snowy_plains"
    settings = files["data/mirrorcraft/worldgen/noise_settings/snowy_plains.json"]
    assert settings["sea_level"] == spec.water.sea_level
    assert settings["noise"]["min_y"] == -64 and settings["noise"]["height"] % 16 == 0
    biome = files["data/mirrorcraft/worldgen/biome/snowy_plains.json"]
    assert biome["precipitation"] == "snow"
    assert "minecraft:freeze_top_layer" in biome["features"][10]
    assert len(biome["features"][6]) == len(spec.ores)  # every ore band at underground_ores
    ore = files["data/mirrorcraft/worldgen/configured_feature/snowy_plains/ore_01_iron_ore.json"]
    targets = {t["target"]["tag"]: t["state"]["Name"] for t in ore["config"]["targets"]}
    assert targets == {
        "minecraft:stone_ore_replaceables": "minecraft:iron_ore",
        "minecraft:deepslate_ore_replaceables": "minecraft:deepslate_iron_ore",
    }
    setup = files["data/mirrorcraft/functions/setup.mcfunction"]
    for line in (
        "gamerule doDaylightCycle false",
        "gamerule doWeatherCycle false",
        f"time set {spec.runtime.time_of_day}",
        "difficulty peaceful",
        "effect give @a minecraft:haste 1000000 0 true",
        "effect give @a minecraft:strength 1000000 0 true",
        f"xp set @a {spec.runtime.experience_level} levels",
    ):
        assert line in setup.splitlines()
    assert files["data/minecraft/tags/functions/load.json"] == {"values": ["mirrorcraft:setup"]}
    assert files["data/minecraft/tags/functions/tick.json"] == {"values": ["mirrorcraft:tick"]}
    # A death clears the ready tag (tags survive death, effects do not), and the setup runs again
    # only for a living player: @e never selects a dead one, @a does.
    assert "scoreboard objectives add mirrorcraft_died deathCount" in setup.splitlines()
    tick = files["data/mirrorcraft/functions/tick.mcfunction"].splitlines()[1:]
    assert tick == [
        "tag @a[scores={mirrorcraft_died=1..}] remove mirrorcraft_ready",
        "scoreboard players reset @a[scores={mirrorcraft_died=1..}] mirrorcraft_died",
        "execute as @e[type=minecraft:player,tag=!mirrorcraft_ready] run function mirrorcraft:player_setup",
    ]


def test_a_flat_spec_compiles_to_a_plain_gradient() -> None:
    spec = biome_spec("plains")
    flat = spec.model_copy(update={"terrain": spec.terrain.model_copy(update={"relief": 0.0})})
    pack = compile_biome_pack(flat)
    router = pack.files["data/mirrorcraft/worldgen/noise_settings/plains.json"]["noise_router"]
    assert router["final_density"]["type"] == "minecraft:y_clamped_gradient"
    assert validate_pack(pack.file_bytes()).ok


def _broken(mutate: Any) -> list[str]:
    pack = compile_biome_pack(biome_spec("plains"))
    files: dict[str, Any] = copy.deepcopy(pack.files)
    mutate(files)
    raw = {
        p: d.encode() if isinstance(d, str) else json.dumps(d).encode() for p, d in files.items()
    }
    report = validate_pack(raw)
    assert not report.ok
    return [str(e) for e in report.errors]


NS = "data/mirrorcraft/worldgen"


def _set(path: str, keys: list[Any], value: Any) -> Any:
    def mutate(files: dict[str, Any]) -> None:
        doc = files[path]
        for k in keys[:-1]:
            doc = doc[k]
        if value is KeyError:
            del doc[keys[-1]]
        else:
            doc[keys[-1]] = value

    return mutate


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            _set(f"{NS}/noise_settings/plains.json", ["noise_router", "final_density"], KeyError),
            "noise_settings/plains.json: noise_router.final_density: required field is missing",
        ),
        (
            _set(f"{NS}/noise_settings/plains.json", ["noise", "height"], 170),
            "noise.height: must be a multiple of 16, got 170",
        ),
        (
            _set(
                f"{NS}/placed_feature/plains/ore_01_iron_ore.json",
                ["placement", 2, "height", "min_inclusive", "absolute"],
                90,
            ),
            "ore_01_iron_ore.json: placement[2].height: min_inclusive (y=90) is above max_inclusive (y=56)",
        ),
        (
            _set(
                f"{NS}/placed_feature/plains/ore_01_iron_ore.json",
                ["placement", 3],
                {"type": "minecraft:in_square"},
            ),
            "has no biome modifier",
        ),
        (
            _set(
                f"{NS}/configured_feature/plains/ore_01_iron_ore.json",
                ["config", "targets", 0, "state", "Name"],
                "minecraft:iron_oar",
            ),
            "config.targets[0].state.Name: unknown block 'minecraft:iron_oar'",
        ),
        (
            _set(f"{NS}/configured_feature/plains/ore_01_iron_ore.json", ["config", "size"], 80),
            "config.size: must be between 0 and 64, got 80",
        ),
        (
            _set(f"{NS}/biome/plains.json", ["features", 6, 0], "mirrorcraft:plains/missing"),
            "biome/plains.json: features[6][0]: placed feature 'mirrorcraft:plains/missing' is neither in this pack",
        ),
        (
            lambda files: files[f"{NS}/biome/plains.json"]["features"][9].append(
                "mirrorcraft:plains/ore_00_coal_ore"
            ),
            "is already listed at step underground_ores",
        ),
        (
            lambda files: files[f"{NS}/biome/plains.json"]["features"].__setitem__(
                9, ["mirrorcraft:plains/ore_00_coal_ore"]
            ),
            "belongs in step underground_ores (6), not vegetal_decoration (9)",
        ),
        (
            _set(
                f"{NS}/world_preset/plains.json",
                ["dimensions", "minecraft:overworld", "generator", "settings"],
                "mirrorcraft:nowhere",
            ),
            "world_preset/plains.json: dimensions.minecraft:overworld.generator.settings: noise settings 'mirrorcraft:nowhere'",
        ),
        (
            _set(f"{NS}/biome/plains.json", ["spawners", "creature", 0, "type"], "minecraft:cowz"),
            "spawners.creature[0].type: unknown entity type 'minecraft:cowz'",
        ),
        (
            _set("pack.mcmeta", ["pack", "pack_format"], 12),
            "pack.mcmeta: pack.pack_format: must be 10",
        ),
        (
            lambda files: files.__setitem__(
                "data/mirrorcraft/functions/setup.mcfunction", "gamemode creative @a\n"
            ),
            "setup.mcfunction: line 1: command 'gamemode' is not in the validator's whitelist",
        ),
        (
            lambda files: files.__setitem__(
                "data/mirrorcraft/functions/setup.mcfunction",
                "scoreboard objectives add a_name_much_too_long deathCount\n",
            ),
            "objective names are 1-16 letters",
        ),
        (
            lambda files: files.__setitem__(
                "data/mirrorcraft/functions/tick.mcfunction", "scoreboard players set @a x 1\n"
            ),
            "expected 'scoreboard objectives add",
        ),
        (
            lambda files: files.__setitem__(
                "data/minecraft/tags/functions/load.json", {"values": ["mirrorcraft:stup"]}
            ),
            "load.json: values[0]: functions 'mirrorcraft:stup' is neither in this pack",
        ),
        (
            _set(
                f"{NS}/noise_settings/plains.json",
                ["surface_rule", "sequence", 0, "then_run", "result_state", "Properties"],
                {"axis": "y"},
            ),
            "has no property 'axis'",
        ),
    ],
)
def test_broken_files_are_reported_with_file_and_field(mutate: Any, expected: str) -> None:
    errors = _broken(mutate)
    assert any(expected in e for e in errors), errors


def test_invalid_json_and_missing_pack_meta_are_reported() -> None:
    files = compile_biome_pack(biome_spec("taiga")).file_bytes()
    files["data/mirrorcraft/worldgen/biome/taiga.json"] = b'{"precipitation": "rain",'
    del files["pack.mcmeta"]
    report = validate_pack(files)
    text = report.render()
    assert "data/mirrorcraft/worldgen/biome/taiga.json: not valid JSON (line 1)" in text
    assert "pack.mcmeta: missing" in text
    assert "features[9][0]" not in text  # an unparsable biome is not checked further
    assert "not a zip file" in validate_zip(b"nope").render()


@pytest.mark.parametrize(
    ("recipe", "expected"),
    [
        (
            {
                "type": "minecraft:crafting_shaped",
                "pattern": ["#"],
                "key": {},
                "result": {"item": "minecraft:stick"},
            },
            "pattern: symbol '#' is not defined in key",
        ),
        (
            {
                "type": "minecraft:smelting",
                "ingredient": {"item": "minecraft:raw_iron"},
                "result": 5,
            },
            "result: must be an item id string, got number",
        ),
        (
            {"type": "minecraft:crafting_fancy", "result": {"item": "minecraft:stick"}},
            "type: 'minecraft:crafting_fancy' is not a 1.19 recipe type",
        ),
        (
            {
                "type": "minecraft:crafting_shapeless",
                "ingredients": [{"item": "minecraft:nope"}],
                "result": {"item": "minecraft:stick"},
            },
            "ingredients[0].item: unknown item 'minecraft:nope'",
        ),
    ],
)
def test_broken_rule_files_are_reported(recipe: dict[str, Any], expected: str) -> None:
    manifest = next(m for m in list_suites() if m.id == "M02")
    files = dict(compiled(manifest).file_bytes())
    files["data/minecraft/recipes/stick.json"] = json.dumps(recipe).encode()
    errors = [str(e) for e in validate_pack(files).errors]
    assert any(f"data/minecraft/recipes/stick.json: {expected}" in e for e in errors), errors


def test_a_folder_on_disk_validates_like_its_zip(tmp_path: Path) -> None:
    pack = compile_biome_pack(biome_spec("savanna"))
    for path, data in pack.file_bytes().items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    assert validate_path(tmp_path).render() == validate_zip(pack.zip_bytes()).render()
