"""The disclosed condition gets the rule sheet of packaged suites and of suite manifest files."""

from __future__ import annotations

import shutil
from pathlib import Path

from mirrorcraft.datapack.suites import compiled, find_suite
from mirrorcraft.runner.executor import rule_sheet_for


def test_sheets_for_packaged_and_file_suites(tmp_path: Path) -> None:
    packaged = compiled(find_suite("M04")).render_sheet()  # type: ignore[arg-type]
    assert rule_sheet_for("M04") == packaged
    from importlib import resources

    source = Path(str(resources.files("mirrorcraft") / "data" / "suites" / "M04.yaml"))
    copy = tmp_path / "my_suite.yaml"
    shutil.copyfile(source, copy)
    assert rule_sheet_for(str(copy)) == packaged
    assert rule_sheet_for("vanilla") is None
    assert rule_sheet_for(str(tmp_path / "missing.yaml")) is None


def test_disclosed_sheet_is_the_prose_then_the_structured_overrides() -> None:
    """Appendix L.11: the prose sheet, then one structured line per changed transition with
    the operation, its input, the standard output and the new output, read from the rules."""
    sheet = rule_sheet_for("M05")
    assert sheet is not None
    prose, _, structured = sheet.partition("\nStructured overrides")
    assert prose == compiled(find_suite("M05")).render_prose()  # type: ignore[arg-type]
    lines = structured.splitlines()[1:]
    assert any(
        line.startswith("2. craft_grid grid [[iron_ingot,iron_ingot,iron_ingot],[null,stick,null]")
        and line.endswith("| vanilla: iron_pickaxe x1 | now: iron_hoe x1")
        for line in lines
    )
    assert "smelt iron_hoe in a furnace | vanilla: iron_nugget x1 | now: iron_pickaxe x1" in sheet
    assert "smelt diamond_hoe in a blast_furnace | vanilla: nothing (no recipe)" in sheet
    assert "iron_axe" not in structured.split("(the same change")[0]  # unchanged inputs left out


def test_every_change_has_structured_lines_that_match_the_compiled_rules() -> None:
    from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
    from mirrorcraft.datapack.overrides import structured_overrides
    from mirrorcraft.datapack.suites import list_suites

    for manifest in list_suites():
        suite = compiled(manifest)
        found = structured_overrides(suite, vanilla_rules(), resolve_rules(manifest.id))
        assert {o.change for o in found} == set(range(len(manifest.changes))), manifest.id
        assert all(o.vanilla != o.new for o in found)
    m04 = structured_overrides(compiled(find_suite("M04")), vanilla_rules())  # type: ignore[arg-type]
    by_input = {(o.operator, o.input): (o.vanilla, o.new) for o in m04}
    assert by_input[("mine", "iron_ore")] == ("raw_iron x1", "raw_iron_block x1")
    assert by_input[("mine", "lapis_ore")] == ("lapis_lazuli x4-9", "lapis_block x1")
    assert by_input[("attack", "cow")] == (
        "beef x1-3, leather x0-2",
        "beef x1-3, bookshelf x1, leather x0-2",
    )


def test_cow_lines_and_cow_loot_agree() -> None:
    """M04 item 5 and M06 item 4 say the cow keeps its normal minimum leather and beef; the
    compiled loot keeps the vanilla leather and beef pools (minimum 0 and 1) and adds a pool."""
    import random

    from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
    from mirrorcraft.rules.loot_context import EntityState, LootContext

    ctx = LootContext(this_entity=EntityState("cow"), killer_is_player=True)
    vanilla = vanilla_rules()
    low = {"leather": 99, "beef": 99}
    table = vanilla.entity_table("cow")
    assert table is not None
    for seed in range(200):
        got = {s.item: s.count for s in vanilla.roll(table, ctx, random.Random(seed))}
        for item in low:
            low[item] = min(low[item], got.get(item, 0))
    assert low == {"leather": 0, "beef": 1}
    for suite, extra in (("M04", {"bookshelf": 1}), ("M06", {"paper": 2})):
        manifest = find_suite(suite)
        assert manifest is not None
        cow = next(c for c in manifest.changes if getattr(c, "target", "") == "cow")
        assert "normal minimum (0 leather and 1 beef)" in cow.sheet
        rules = resolve_rules(suite)
        mirror_table = rules.entity_table("cow")
        assert mirror_table is not None
        for seed in range(200):
            got = {s.item: s.count for s in rules.roll(mirror_table, ctx, random.Random(seed))}
            plain = {s.item: s.count for s in vanilla.roll(table, ctx, random.Random(seed))}
            assert {k: v for k, v in got.items() if k not in extra} == plain
            assert all(got[k] == v for k, v in extra.items())


def test_deepslate_ores_change_only_where_the_sheet_names_them() -> None:
    """L.11 names the deepslate ores in M02 and M04 and only the stone ores in M03 item 5 and
    M06 items 2, 3 and 5; read as written (docs/agents.md, "Deepslate ores")."""
    from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules

    vanilla = vanilla_rules()

    def changed(suite: str, block: str) -> bool:
        key = ("loot_tables", f"minecraft:blocks/{block}")
        return resolve_rules(suite).documents.get(key) != vanilla.documents.get(key)

    named = {
        "M02": ["deepslate_iron_ore", "deepslate_diamond_ore"],
        "M04": [f"deepslate_{o}_ore" for o in ("coal", "iron", "diamond", "lapis")],
    }
    stone_only = {"M03": ["diamond"], "M06": ["iron", "diamond", "lapis"]}
    for suite, blocks in named.items():
        assert all(changed(suite, b) for b in blocks), suite
    for suite, ores in stone_only.items():
        for ore in ores:
            assert changed(suite, f"{ore}_ore") and not changed(suite, f"deepslate_{ore}_ore")
        manifest = find_suite(suite)
        assert manifest is not None
        assert "deepslate" not in compiled(manifest).render_prose().lower(), suite
