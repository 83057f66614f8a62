"""A datapack file with a malformed field or a dangling reference is one clear error.

Each case used to end in a traceback (a malformed id, a list where a name belongs) or
to load without a word: a loot_table entry naming a table no pack defines dropped
nothing, and an advancement whose parent is missing counted as a milestone in the
simulator although a 1.19 server does not load it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.rules.ruleset import RuleSet
from tests.test_hostile_data import cli, one_line_error, write_pack

VANILLA = Path(__file__).resolve().parents[1] / "src/mirrorcraft/data/packs/vanilla/data/minecraft"


def vanilla_doc(rel: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((VANILLA / rel).read_text())
    return doc


def edited(rel: str, path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(vanilla_doc(rel))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def find(doc: Any, key: str, prefix: tuple[Any, ...] = ()) -> tuple[Any, ...]:
    """The path of the first ``key`` in a document (depth first)."""
    if isinstance(doc, dict):
        if key in doc:
            return (*prefix, key)
        items: Any = doc.items()
    elif isinstance(doc, list):
        items = enumerate(doc)
    else:
        return ()
    for k, v in items:
        hit = find(v, key, (*prefix, k))
        if hit:
            return hit
    return ()


ADV = "advancements/story/obtain_armor.json"
GRAVEL = "loot_tables/blocks/gravel.json"
COW = "loot_tables/entities/cow.json"


def _case(rel: str, key: str, value: Any) -> dict[str, Any]:
    path = find(vanilla_doc(rel), key)
    assert path, (rel, key)
    return edited(rel, path, value)


CASES = [
    (
        "recipe type",
        "recipes/book.json",
        lambda: edited("recipes/book.json", ("type",), "Bad Id!!"),
    ),
    ("criterion trigger", ADV, lambda: _case(ADV, "trigger", "minecraft:")),
    ("requirement name", ADV, lambda: edited(ADV, ("requirements", 0, 0), ["iron_boots"])),
    ("parent id", ADV, lambda: edited(ADV, ("parent",), "Not An Id")),
    ("parent type", ADV, lambda: edited(ADV, ("parent",), 5)),
    ("chances", GRAVEL, lambda: _case(GRAVEL, "chances", [None])),
    ("entity flags", COW, lambda: _case(COW, "flags", 5)),
    (
        "bonus enchantment id",
        "loot_tables/blocks/iron_ore.json",
        lambda: edited(
            "loot_tables/blocks/iron_ore.json",
            ("pools", 0, "entries", 0, "children", 1, "functions", 0, "enchantment"),
            5,
        ),
    ),
]


@pytest.mark.parametrize(("what", "rel", "make"), CASES, ids=[c[0] for c in CASES])
def test_a_malformed_field_is_a_datapack_error_naming_the_file(
    tmp_path: Path, what: str, rel: str, make: Any
) -> None:
    pack = write_pack(tmp_path / "p", {f"data/minecraft/{rel}": make()})
    with pytest.raises(DatapackError) as info:
        RuleSet.load([pack])
    assert rel in str(info.value), what


def test_a_loot_table_entry_naming_a_missing_table_is_refused(tmp_path: Path) -> None:
    table = {
        "type": "minecraft:block",
        "pools": [
            {"rolls": 1, "entries": [{"type": "loot_table", "name": "minecraft:blocks/nope"}]}
        ],
    }
    pack = write_pack(tmp_path / "dangling", {"data/minecraft/loot_tables/blocks/dirt.json": table})
    one_line_error(
        cli("suites", "check", str(pack)), "blocks/dirt.json", "'minecraft:blocks/nope'", "no pack"
    )


def test_an_advancement_whose_parent_is_missing_is_refused(tmp_path: Path) -> None:
    adv = edited(ADV, ("parent",), "minecraft:story/nope")
    pack = write_pack(tmp_path / "orphan", {f"data/minecraft/{ADV}": adv})
    one_line_error(cli("suites", "check", str(pack)), "obtain_armor.json", "story/nope")


def test_a_malformed_recipe_type_through_play_is_one_line(tmp_path: Path) -> None:
    doc = edited("recipes/book.json", ("type",), "Bad Id!!")
    pack = write_pack(tmp_path / "badtype", {"data/minecraft/recipes/book.json": doc})
    actions = tmp_path / "a.jsonl"
    actions.write_text('{"skill": "wait", "args": {}}\n')
    done = cli(
        "play", "--world", "plains-1", "--suite", str(pack), "--task", "diamond",
        "--actions", str(actions),
    )  # fmt: skip
    one_line_error(done, "recipes/book.json", "Bad Id!!")


def _sugar_cane(pool: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "minecraft:block",
        "pools": [
            {"rolls": 1, "entries": [{"type": "minecraft:item", "name": "minecraft:sugar_cane"}]},
            pool,
        ],
    }


def _leather(count: Any, **function: Any) -> dict[str, Any]:
    fn = {"function": "minecraft:set_count", "count": count, **function}
    entry = {"type": "minecraft:item", "name": "minecraft:leather", "functions": [fn]}
    return {"rolls": 1, "entries": [entry]}


SUGAR_CANE = "data/minecraft/loot_tables/blocks/sugar_cane.json"


@pytest.mark.parametrize(
    ("pool", "field"),
    [
        (_leather(-3), "pools[1].entries[0].functions[0].count"),
        (_leather({"type": "minecraft:uniform", "min": -5, "max": 0}), "functions[0].count"),
        ({**_leather(1), "rolls": -2}, "pools[1].rolls"),
    ],
    ids=["negative count", "count range never positive", "negative rolls"],
)
def test_a_loot_table_that_can_never_drop_its_entry_is_refused(
    tmp_path: Path, pool: dict[str, Any], field: str
) -> None:
    """A negative count or rolls loaded, and the suite's extra drop silently never came."""
    pack = write_pack(tmp_path / "neg", {SUGAR_CANE: _sugar_cane(pool)})
    one_line_error(cli("suites", "check", str(pack)), "sugar_cane.json", field, "never drops")


def test_counts_that_can_be_positive_or_are_conditional_still_load(tmp_path: Path) -> None:
    """Vanilla's wither skeleton rolls coal -1..1; a conditional zero means 'none in this case'."""
    pools = [
        _leather({"type": "minecraft:uniform", "min": -1, "max": 1}),
        _leather(0, conditions=[{"condition": "minecraft:survives_explosion"}]),
        _leather(-1, add=True),
    ]
    for i, pool in enumerate(pools):
        RuleSet.load([write_pack(tmp_path / f"ok{i}", {SUGAR_CANE: _sugar_cane(pool)})])
