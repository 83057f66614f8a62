"""M01 and M03 on a stock 1.19 server: counted cooking results in the server form.

The server form rewrites each cooking recipe whose result has a count to give a marker item
and adds a tick function that swaps every held marker for ``count`` of the real result.
These tests run the generated functions with a small interpreter of exactly the commands
they use (their 1.19 meaning is in the comments), and check that one ``smelt`` gives what the
embedded backend gives for the same action, and that nothing else is multiplied.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.datapack.server_form import MARKERS, ServerFormError, server_form
from mirrorcraft.datapack.suites import compiled, find_suite, list_suites
from mirrorcraft.worldgen import deterministic_zip, validate_zip


class Player:
    def __init__(self, inventory: dict[str, int]):
        self.inv: Counter[str] = Counter(inventory)
        self.score = 0


def run_function(files: dict[str, bytes], name: str, players: list[Player]) -> None:
    """Run a generated function for every player, as the tick tag does each server tick."""
    ns, path = name.split(":")
    text = files[f"data/{ns}/functions/{path}.mcfunction"].decode()
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(
            r"execute as @a store result score @s (\w+) run clear @s minecraft:(\w+)", line
        )
        if m:  # clear removes every matching item and returns how many; store puts it in the score
            for p in players:
                p.score = p.inv.pop(m.group(2), 0)
            continue
        m = re.fullmatch(r"execute as @a\[scores=\{(\w+)=1\.\.\}\] run function (\S+)", line)
        if m:
            for p in [p for p in players if p.score >= 1]:
                run_function(files, m.group(2), [p])
            continue
        m = re.fullmatch(r"give @s minecraft:(\w+) (\d+)", line)
        if m:
            for p in players:
                p.inv[m.group(1)] += int(m.group(2))
            continue
        m = re.fullmatch(r"scoreboard players remove @s (\w+) 1", line)
        if m:
            for p in players:
                p.score -= 1
            continue
        m = re.fullmatch(r"execute if score @s (\w+) matches 1\.\. run function (\S+)", line)
        if m:
            for p in players:
                if p.score >= 1:
                    run_function(files, m.group(2), [p])
            continue
        m = re.fullmatch(r"scoreboard objectives add (\w+) dummy", line)
        if m:
            continue
        raise AssertionError(f"the interpreter does not know {line!r}")


def tick(files: dict[str, bytes], players: list[Player]) -> None:
    tags = json.loads(files["data/minecraft/tags/functions/tick.json"])
    for name in tags["values"]:
        run_function(files, name, players)


def cook(files: dict[str, bytes], station_type: str, item: str) -> str | None:
    """The 1.19 result id of cooking one ``item`` (a string: 1.19 takes nothing else)."""
    for path, data in files.items():
        if "/recipes/" not in path:
            continue
        doc = json.loads(data)
        if doc.get("type") == station_type and doc["ingredient"].get("item") == f"minecraft:{item}":
            assert isinstance(doc["result"], str), path
            return str(doc["result"]).removeprefix("minecraft:")
    return None


@pytest.mark.parametrize("suite", ["M01", "M03"])
def test_one_smelt_gives_what_the_embedded_backend_gives(suite: str) -> None:
    files = compiled(find_suite(suite)).file_bytes()  # type: ignore[arg-type]
    form = server_form(files)
    embedded = resolve_rules(suite)
    for station, kind in (
        ("furnace", "minecraft:smelting"),
        ("blast_furnace", "minecraft:blasting"),
    ):
        recipe = embedded.cooking("raw_iron", station)
        assert recipe is not None and recipe.count > 1
        marker = cook(form.files, kind, "raw_iron")
        assert marker in MARKERS
        for units in (1, 4, 6):
            # The player already owns some of the result, crafted legitimately.
            player = Player({recipe.result: 5, marker: units})  # units taken out of the furnace
            tick(form.files, [player])
            assert player.inv == Counter({recipe.result: 5 + units * recipe.count})
            tick(form.files, [player])  # nothing more happens on later ticks
            assert player.inv == Counter({recipe.result: 5 + units * recipe.count})


def test_nothing_else_is_multiplied() -> None:
    form = server_form(compiled(find_suite("M01")).file_bytes())  # type: ignore[arg-type]
    # Nuggets crafted from an ingot (9 each), ingots and gold held with no marker in the
    # inventory: untouched, tick after tick.
    player = Player({"iron_nugget": 9, "iron_ingot": 2, "gold_ingot": 1})
    for _ in range(3):
        tick(form.files, [player])
    assert player.inv == Counter({"iron_nugget": 9, "iron_ingot": 2, "gold_ingot": 1})
    assert cook(form.files, "minecraft:smelting", "raw_gold") is None  # vanilla's, unchanged
    bystander = Player({"iron_nugget": 1})
    smelter = Player({"barrier": 2})
    tick(form.files, [bystander, smelter])
    assert bystander.inv == Counter({"iron_nugget": 1}) and smelter.inv == Counter(
        {"iron_nugget": 6}
    )


def test_markers_are_never_obtainable_otherwise() -> None:
    """No vanilla or packaged-suite recipe, loot table or trade yields a marker item."""
    for rules in [vanilla_rules(), *(resolve_rules(m.id) for m in list_suites())]:
        produced = {str(getattr(r, "result", "")) for r in rules.recipes.values()}
        for table in rules.loot_tables.values():
            produced |= rules.table_outputs(table)
        assert not produced & set(MARKERS), rules.name
        assert all(m in rules.game.items for m in MARKERS)


def test_the_server_form_is_a_valid_1_19_pack_and_deterministic() -> None:
    files = compiled(find_suite("M03")).file_bytes()  # type: ignore[arg-type]
    a, b = server_form(files), server_form(dict(reversed(list(files.items()))))
    assert deterministic_zip(a.files) == deterministic_zip(b.files)
    report = validate_zip(deterministic_zip(a.files))
    assert report.ok, report.render()
    assert not any("extension" in w.message for w in report.warnings)
    m02 = compiled(find_suite("M02")).file_bytes()  # type: ignore[arg-type]
    assert server_form(m02).files == m02 and not server_form(m02).changed


def _pack(results: list[tuple[str, int]], mention: str | None = None) -> dict[str, bytes]:
    files: dict[str, bytes] = {
        "pack.mcmeta": b'{"pack": {"pack_format": 10, "description": "t"}}\n'
    }
    for i, (item, count) in enumerate(results):
        doc = {
            "type": "minecraft:smelting",
            "ingredient": {"item": f"minecraft:input_{i}"},
            "result": {"item": f"minecraft:{item}", "count": count},
            "experience": 0.1,
            "cookingtime": 200,
        }
        files[f"data/t/recipes/r{i}.json"] = json.dumps(doc).encode()
    if mention:
        files["data/t/loot_tables/blocks/x.json"] = json.dumps(
            {"name": f"minecraft:{mention}"}
        ).encode()
    return files


def test_markers_avoid_items_the_pack_uses_and_run_out_clearly() -> None:
    form = server_form(_pack([("iron_nugget", 3), ("gold_nugget", 2)], mention="barrier"))
    assert set(form.swaps) == {"structure_void", "light"}  # barrier is used by the pack
    assert sorted(form.swaps.values()) == [("gold_nugget", 2), ("iron_nugget", 3)]
    many = [(f"item_{i}", 2) for i in range(len(MARKERS) + 1)]
    with pytest.raises(ServerFormError, match="marker items left"):
        server_form(_pack(many))
