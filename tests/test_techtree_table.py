"""The tech-tree suite's table, its datapack, spec selectors and what stays progression-only."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.datapack.suites import list_suites
from mirrorcraft.env import make, registered_ids
from mirrorcraft.evaluator.tasks import (
    TECHTREE,
    UnknownTaskError,
    expand_task_selectors,
    get_task,
    progression_tasks,
    task_table,
    tasks_in_group,
    techtree_groups,
    techtree_tasks,
)
from mirrorcraft.rules.pack import pack_from_files
from mirrorcraft.rules.ruleset import RuleSet, tasks_pack_path, vanilla_pack
from mirrorcraft.runner.spec import SpecError, expand, parse_spec

GROUPS = ["wooden", "stone", "iron", "gold", "redstone", "diamond", "armour"]


def test_the_table_has_seven_groups_and_seventy_single_milestone_tasks() -> None:
    assert techtree_groups() == GROUPS
    tasks = techtree_tasks()
    assert len(tasks) == 70
    assert sum(len(tasks_in_group(g)) for g in GROUPS) == 70
    # The paper averages its Diamond group over seven tasks; the other groups hold 10-12.
    assert len(tasks_in_group("diamond")) == 7
    assert all(10 <= len(tasks_in_group(g)) <= 12 for g in GROUPS if g != "diamond")
    for task_id in tasks:
        task = get_task(task_id)
        assert task.suite == TECHTREE and task.group in GROUPS
        assert task_id.startswith("obtain_") and task.budget >= 10
        assert len(task.milestones) == 1 and task.final.value == 100
        assert task.final.title == task.title
    assert progression_tasks() == ["iron_armor", "diamond", "enchantment"]
    assert all(get_task(t).group is None for t in progression_tasks())
    assert list(task_table()) == [*progression_tasks(), *tasks]
    assert get_task("obtain_diamond").with_budget(7).group == "diamond"


def test_every_task_advancement_is_in_the_vanilla_rules_and_names_known_items() -> None:
    rules = vanilla_rules()
    for task_id in techtree_tasks():
        task = get_task(task_id)
        adv = rules.advancements[task.final.advancement]
        assert rules.sources[("advancements", task.final.advancement)] == "tasks"
        assert (adv.title, adv.description) == (task.title, task.final.description)
        [crit] = adv.criteria.values()
        assert crit.trigger == "inventory_changed"
        [pred] = crit.items
        assert pred.items and pred.items <= set(rules.game.items)


def test_the_pack_holds_exactly_the_table_advancements() -> None:
    root = tasks_pack_path()
    meta = json.loads((root / "pack.mcmeta").read_text(encoding="utf-8"))
    assert meta["pack"]["pack_format"] == 10
    folder = root / "data" / "techtree" / "advancements"
    files = {f"techtree:{p.stem}" for p in folder.glob("*.json")}
    assert files == {get_task(t).final.advancement for t in techtree_tasks()} | {"techtree:root"}
    assert [p for p in Path(root).rglob("*.json") if p.parent != folder] == []


def test_every_rule_set_carries_the_task_pack_and_a_later_pack_can_override_it() -> None:
    ids = {get_task(t).final.advancement for t in techtree_tasks()}
    for suite in list_suites():
        assert ids <= set(resolve_rules(suite.id).advancements)
    assert not ids & set(RuleSet.load(base=vanilla_pack()).advancements)
    doc = {
        "criteria": {
            "obtain": {
                "trigger": "minecraft:inventory_changed",
                "conditions": {"items": [{"items": ["minecraft:stick"]}]},
            }
        }
    }
    override = pack_from_files(
        {
            PurePosixPath("pack.mcmeta"): b'{"pack": {"pack_format": 10, "description": "x"}}',
            PurePosixPath("data/techtree/advancements/logs.json"): json.dumps(doc).encode(),
        },
        "override",
    )
    rules = RuleSet.load([override])
    [crit] = rules.advancements["techtree:logs"].criteria.values()
    assert crit.items[0].items == {"stick"}
    assert rules.fingerprint != vanilla_rules().fingerprint


def _spec(tasks: list[str]) -> dict[str, object]:
    return {
        "name": "tt",
        "worlds": ["plains-1"],
        "rules": ["vanilla"],
        "tasks": tasks,
        "agents": ["oracle"],
    }


def test_spec_selectors_expand_to_task_ids() -> None:
    spec = parse_spec(_spec(["group:iron", "diamond", "obtain_iron_ingot"]), "t")
    assert spec.tasks == (*tasks_in_group("iron"), "diamond")
    assert {c.task for c in expand(spec)} == set(spec.tasks)
    assert len(parse_spec(_spec(["techtree"]), "t").tasks) == 70
    assert parse_spec(_spec(["progression"]), "t").tasks == tuple(progression_tasks())
    plain = parse_spec(_spec(["iron_armor", "diamond"]), "t")
    assert plain.tasks == ("iron_armor", "diamond")
    assert expand_task_selectors(["group:wooden"])[0] == "obtain_logs"
    with pytest.raises(SpecError, match="unknown task group 'copper'"):
        parse_spec(_spec(["group:copper"]), "t")
    with pytest.raises(SpecError, match="unknown task 'obtain_bread'"):
        parse_spec(_spec(["obtain_bread"]), "t")
    with pytest.raises(UnknownTaskError, match="group:armour"):  # where selectors are taken
        expand_task_selectors(["armour"])
    with pytest.raises(UnknownTaskError) as raised:  # where one task id is
        get_task("armour")
    assert "group:armour" not in str(raised.value)


def test_the_gym_registry_stays_on_the_progression_tasks() -> None:
    ids = registered_ids()
    assert len(ids) == 210 + 525  # the main study's worlds and the horizon study's
    assert not any("obtain_" in i for i in ids)
    env = make("plains-1@M04/obtain_stick")
    obs, info = env.reset(seed=1)
    assert obs.progress.next_milestone == "techtree:stick" and info["budget"] == env.task.budget


def test_easy_and_hard_groups_and_the_families_the_body_cannot_do() -> None:
    from mirrorcraft.body.actions import skill_specs
    from mirrorcraft.evaluator.tasks import techtree_difficulty, techtree_file

    assert techtree_difficulty() == {
        "easy": ["wooden", "stone", "gold"],
        "hard": ["iron", "redstone", "diamond", "armour"],
    }
    outside = {o.family.split()[0]: o for o in techtree_file().outside_body}
    assert {"eating", "repairing", "trading"} <= set(outside)
    skills = set(skill_specs())
    for family in techtree_file().outside_body:
        assert family.reason and not set(family.missing_skills) & skills, family.family
    # No listed task belongs to one of those families.
    words = ("eat", "repair", "trade")
    assert not [t for t in techtree_tasks() if set(t.split("_")) & set(words)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seeds", ""], "names no seed"),
        (["--seeds", "1,x"], "whole numbers"),
        (["--seeds", "1", "--world", "nowhere"], "unknown world 'nowhere'"),
    ],
)
def test_the_calibration_script_refuses_input_that_backs_no_budget(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty seed list used to print FAILED for every task and exit 0; a bad seed or
    world ended in a traceback."""
    script = _calibration_script()
    with pytest.raises(SystemExit) as stop:
        script.main(["--task", "obtain_logs", *args])
    assert stop.value.code == 2 and message in capsys.readouterr().err


def _calibration_script() -> Any:
    path = Path(__file__).resolve().parent.parent / "scripts" / "calibrate_techtree.py"
    spec = importlib.util.spec_from_file_location("calibrate_techtree", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_the_calibration_script_writes_no_budget_that_a_failed_oracle_run_leaves_unbacked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--write used to write a budget from the successful runs of a task whose other runs
    failed (a failure may be its longest route), so a budget could fall below a world's
    need; now only tasks whose every run succeeded are written, and the others are named."""
    from mirrorcraft.runner.techtree_controls import OracleRun, TechTreeReport

    script = _calibration_script()
    table = tmp_path / "techtree.yaml"
    table.write_text(
        "  - {id: obtain_logs, budget: 7, group: wooden}\n"
        "  - {id: obtain_planks, budget: 8, group: wooden}\n",
        encoding="utf-8",
    )

    def controls(worlds: Any, rules: Any, tasks: Any, **_: Any) -> TechTreeReport:
        return TechTreeReport(
            oracle=[
                OracleRun("plains-1", "obtain_logs", 7, True, 4, "success"),
                OracleRun("plains-2", "obtain_logs", 7, False, 400, "budget"),
                OracleRun("plains-1", "obtain_planks", 8, True, 6, "success"),
                OracleRun("plains-2", "obtain_planks", 8, True, 8, "success"),
            ]
        )

    monkeypatch.setattr(script, "run_techtree_controls", controls)
    monkeypatch.setattr(script, "TABLE", table)
    argv = ["--task", "obtain_logs", "--task", "obtain_planks", "--seeds", "1", "--write"]
    argv += ["--world", "plains-1", "--world", "plains-2"]
    assert script.main(argv) == 1
    written = table.read_text(encoding="utf-8")
    assert "{id: obtain_logs, budget: 7," in written  # left as it was
    assert "{id: obtain_planks, budget: 20," in written  # 2.5 x 8, backed by both runs
    out = capsys.readouterr()
    assert "updated 1 budget(s)" in out.out
    assert "not written" in out.err and "obtain_logs (1 of 2 runs failed)" in out.err
