"""Absurd data is refused at load time with one line, wherever a user hands it to us.

Each case here used to hang or eat memory: a loot pool with a billion rolls (``rules
loot``, ``play``, ``suites check`` and ``run`` all looped), a 1 MB zip holding a
gigabyte of JSON, and a kilobyte of YAML aliases that expands to a billion values.
The tests only check the exit code and the message (speed is for benchmarks).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from random import Random
from typing import Any

import pytest
import yaml

from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.rules.loot import MAX_LOOT_WORK
from mirrorcraft.rules.loot_context import LootContext
from mirrorcraft.rules.loot_numbers import MAX_LOOT_NUMBER, MAX_LOOT_ROLLS
from mirrorcraft.rules.pack import MAX_PACK_BYTES
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.safeload import MAX_YAML_NODES

META = {"pack": {"pack_format": 10, "description": "hostile"}}
DIRT = "data/minecraft/loot_tables/blocks/dirt.json"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def one_line_error(done: subprocess.CompletedProcess[str], *fragments: str) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    err = done.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, err
    return err


def pool(rolls: Any = 1, **extra: Any) -> dict[str, Any]:
    return {
        "rolls": rolls,
        "entries": [{"type": "minecraft:item", "name": "minecraft:dirt"}],
        **extra,
    }


def write_pack(root: Path, files: dict[str, Any]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pack.mcmeta").write_text(json.dumps(META))
    for rel, doc in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return root


@pytest.fixture(scope="module")
def rolls_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    table = {"type": "minecraft:block", "pools": [pool(1_000_000_000)]}
    return write_pack(tmp_path_factory.mktemp("rolls") / "rolls", {DIRT: table})


def test_rules_loot_refuses_a_billion_rolls(rolls_pack: Path) -> None:
    done = cli("rules", "--pack", str(rolls_pack), "loot", "dirt")
    one_line_error(done, "blocks/dirt.json", "pools[0].rolls", "limit of 4096")


def test_play_refuses_a_billion_rolls(rolls_pack: Path, tmp_path: Path) -> None:
    actions = tmp_path / "a.jsonl"
    actions.write_text(json.dumps({"skill": "mine", "args": {"block": "dirt"}}) + "\n")
    done = cli(
        "play", "--world", "plains-1", "--task", "diamond", "--suite", str(rolls_pack),
        "--actions", str(actions),
    )  # fmt: skip
    one_line_error(done, "pools[0].rolls")


def test_suites_check_refuses_a_billion_rolls(rolls_pack: Path) -> None:
    one_line_error(cli("suites", "check", str(rolls_pack)), "pools[0].rolls")


def test_run_refuses_a_billion_rolls_before_any_episode(rolls_pack: Path, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "name": "hostile",
                "worlds": ["plains-1"],
                "rules": ["vanilla", str(rolls_pack)],
                "tasks": ["diamond"],
                "agents": ["random"],
                "budget": 5,
            }
        )
    )
    done = cli("run", str(spec), "--out", str(tmp_path / "out"), "--workers", "1", "--no-report")
    one_line_error(done, "pools[0].rolls")
    assert not (tmp_path / "out" / "results.sqlite").exists()


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ({"pools": [pool({"type": "minecraft:uniform", "min": 1, "max": 10**9})]}, "rolls.max"),
        ({"pools": [pool(1, bonus_rolls=1e6)]}, "bonus_rolls"),
        ({"pools": [pool({"type": "minecraft:binomial", "n": 10**7, "p": 0.5})]}, "rolls.n"),
        (
            {"pools": [pool(1, functions=[{"function": "minecraft:set_count", "count": 10**8}])]},
            "functions[0].count",
        ),
        (
            {
                "pools": [
                    pool(
                        1,
                        functions=[
                            {
                                "function": "minecraft:set_count",
                                "count": {"type": "minecraft:binomial", "n": 10**9, "p": 0.5},
                            }
                        ],
                    )
                ]
            },
            "functions[0].count.n",
        ),
        (
            {
                "pools": [
                    pool(
                        1,
                        functions=[
                            {
                                "function": "minecraft:apply_bonus",
                                "enchantment": "minecraft:fortune",
                                "formula": "minecraft:binomial_with_bonus_count",
                                "parameters": {"extra": 10**9, "probability": 0.5},
                            }
                        ],
                    )
                ]
            },
            "parameters.extra",
        ),
        ({"pools": [pool(MAX_LOOT_ROLLS + 1)]}, "pools[0].rolls"),
        ({"pools": [pool(1, functions=[{"function": "minecraft:set_count", "count": 1e400}])]}, ""),
    ],
)
def test_absurd_loot_numbers_are_refused_naming_the_field(
    tmp_path: Path, table: dict[str, Any], field: str
) -> None:
    # 1e400 cannot even be written as JSON Python reads back: it is refused as not finite.
    pack = write_pack(tmp_path / "p", {DIRT: json.dumps({"type": "minecraft:block", **table})})
    with pytest.raises(DatapackError) as info:
        RuleSet.load([pack])
    assert field in str(info.value)
    assert "dirt.json" in str(info.value)


def test_values_inside_the_bounds_still_load(tmp_path: Path) -> None:
    table = {
        "type": "minecraft:block",
        "pools": [
            pool(
                {"type": "minecraft:uniform", "min": 1, "max": MAX_LOOT_ROLLS},
                functions=[{"function": "minecraft:set_count", "count": MAX_LOOT_NUMBER}],
            )
        ],
    }
    rules = RuleSet.load([write_pack(tmp_path / "p", {DIRT: table})])
    assert rules.loot_tables["minecraft:blocks/dirt"].shape[0][0] == MAX_LOOT_ROLLS


def test_a_table_that_fans_out_through_references_is_refused(tmp_path: Path) -> None:
    # 200 rolls, each rolling the table itself again, 16 references deep: 200^16 rolls.
    table = {
        "type": "minecraft:block",
        "pools": [
            {"rolls": 200, "entries": [{"type": "loot_table", "name": "minecraft:blocks/dirt"}]}
        ],
    }
    pack = write_pack(tmp_path / "fan", {DIRT: table})
    done = cli("rules", "--pack", str(pack), "loot", "dirt")
    one_line_error(done, "blocks/dirt.json", f"more than {MAX_LOOT_WORK}", "references")


def test_a_table_that_references_itself_is_not_rolled_again_inside_itself(
    tmp_path: Path,
) -> None:
    """The game refuses to roll a table inside its own roll ("Detected infinite loop in loot
    tables"): the reference drops nothing. It used to be followed 16 levels deep (17 dirt)."""
    table = {
        "type": "minecraft:block",
        "pools": [
            pool(1),
            {"rolls": 1, "entries": [{"type": "loot_table", "name": "minecraft:blocks/dirt"}]},
        ],
    }
    pack = write_pack(tmp_path / "loop", {DIRT: table})
    done = cli("rules", "--pack", str(pack), "loot", "dirt")
    assert done.returncode == 0, done.stderr
    rules = RuleSet.load([pack])
    drops = rules.roll(rules.loot_tables["minecraft:blocks/dirt"], LootContext(), Random(0))
    assert [(d.item, d.count) for d in drops] == [("dirt", 1)]


def test_a_cycle_through_two_tables_stops_where_it_comes_back(tmp_path: Path) -> None:
    """dirt -> gravel -> dirt: each table is rolled once; a chain without a cycle is followed."""
    gravel = "data/minecraft/loot_tables/blocks/gravel.json"
    sand = "data/minecraft/loot_tables/blocks/sand.json"

    def refers(item: str, *to: str) -> dict[str, Any]:
        pools = [{"rolls": 1, "entries": [{"type": "minecraft:item", "name": item}]}]
        pools += [
            {"rolls": 1, "entries": [{"type": "loot_table", "name": f"minecraft:blocks/{t}"}]}
            for t in to
        ]
        return {"type": "minecraft:block", "pools": pools}

    pack = write_pack(
        tmp_path / "cycle",
        {
            DIRT: refers("minecraft:dirt", "gravel"),
            gravel: refers("minecraft:flint", "dirt", "sand"),
            sand: refers("minecraft:sand"),
        },
    )
    rules = RuleSet.load([pack])
    for start, want in (("dirt", ["dirt", "flint", "sand"]), ("gravel", ["flint", "dirt", "sand"])):
        table = rules.loot_tables[f"minecraft:blocks/{start}"]
        drops = rules.roll(table, LootContext(), Random(0))
        assert [(d.item, d.count) for d in drops] == [(w, 1) for w in want], start


def test_rules_loot_refuses_an_absurd_enchantment_level() -> None:
    done = cli(
        "rules", "loot", "potatoes", "--tool", "diamond_hoe", "--enchant", "fortune=1000000000"
    )
    one_line_error(done, "--enchant", "1 to 255")


# -- zip bombs ---------------------------------------------------------------------------------


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("pack.mcmeta", json.dumps(META))
        for name, data in members.items():
            zf.writestr(name, data)
    return path


@pytest.fixture(scope="module")
def zip_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 300 members of 4 MiB of spaces each: 1.2 GiB of "JSON" in about 1.2 MB of zip.
    filler = b"{" + b" " * (4 * 1024 * 1024 - 3) + b"}"
    members = {f"data/minecraft/recipes/r{i:03d}.json": filler for i in range(300)}
    path = _zip(tmp_path_factory.mktemp("bomb") / "bomb.zip", members)
    assert path.stat().st_size < 2 * 1024 * 1024
    return path


def test_rules_refuses_a_zip_bomb_before_reading_it(zip_bomb: Path) -> None:
    done = cli("rules", "--pack", str(zip_bomb), "info")
    one_line_error(done, "bomb.zip", f"{MAX_PACK_BYTES // (1024 * 1024)} MiB limit")


def test_suites_check_refuses_a_zip_bomb(zip_bomb: Path) -> None:
    one_line_error(cli("suites", "check", str(zip_bomb)), "MiB limit")


def test_a_member_that_expands_too_many_times_is_refused(tmp_path: Path) -> None:
    bomb = _zip(tmp_path / "one.zip", {"data/minecraft/recipes/x.json": b" " * (3 * 1024 * 1024)})
    done = cli("rules", "--pack", str(bomb), "info")
    one_line_error(done, "recipes/x.json", "fold", "zip bomb")


# -- YAML alias bombs --------------------------------------------------------------------------


def billion_laughs(indent: str = "") -> str:
    lines = [f'{indent}a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    names = "abcdefghij"
    for prev, name in itertools.pairwise(names):
        refs = ",".join(f"*{prev}" for _ in range(9))
        lines.append(f"{indent}{name}: &{name} [{refs}]")
    return "\n".join(lines) + "\n"


def test_run_refuses_a_yaml_bomb_in_a_model_client(tmp_path: Path) -> None:
    text = (
        "schema_version: 1\nname: bomb\nworlds: [plains-1]\nrules: [vanilla]\n"
        "tasks: [diamond]\nagents: [react]\nmodels:\n  - name: m\n"
        "    base_url: http://127.0.0.1:9/v1\n    client:\n      extra_body:\n"
        + billion_laughs(" " * 8)
    )
    assert len(text) < 1500
    spec = tmp_path / "bomb.yaml"
    spec.write_text(text)
    done = cli("run", str(spec), "--out", str(tmp_path / "out"), "--no-report")
    one_line_error(done, "bomb.yaml:", f"{MAX_YAML_NODES:,} values")


def test_suites_check_refuses_a_yaml_bomb_manifest(tmp_path: Path) -> None:
    manifest = tmp_path / "bomb.yaml"
    manifest.write_text("id: X01\n" + billion_laughs())
    one_line_error(cli("suites", "check", str(manifest)), "bomb.yaml:", "alias")


def test_a_file_world_refuses_a_yaml_bomb(tmp_path: Path) -> None:
    biome = tmp_path / "biome.yaml"
    biome.write_text(billion_laughs())
    actions = tmp_path / "a.jsonl"
    actions.write_text("")
    done = cli("play", "--world", f"{biome}#1", "--task", "diamond", "--actions", str(actions))
    one_line_error(done, "biome.yaml:", "alias")


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "loop.yaml"
    spec.write_text("name: loop\nworlds: &w [plains-1, *w]\n")
    done = cli("run", str(spec), "--out", str(tmp_path / "out"), "--no-report")
    one_line_error(done, "loop.yaml:2", "contains it")


# -- files with no end --------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("rules", "--pack", "/dev/zero", "loot", "gravel"), "not a folder or a zip file"),
        (("suites", "check", "/dev/zero"), "more than the 16 MiB limit"),
        (("run", "/dev/zero", "--out", "{tmp}/out"), "more than the 16 MiB limit"),
    ],
    ids=["pack", "manifest", "spec"],
)
def test_a_file_that_never_ends_is_refused_not_read_forever(
    args: tuple[str, ...], fragment: str, tmp_path: Path
) -> None:
    """A device as a pack, manifest or spec (its size reads 0) used to be read forever."""
    done = cli(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    one_line_error(done, "/dev/zero" if args[0] != "rules" else "zero", fragment)
