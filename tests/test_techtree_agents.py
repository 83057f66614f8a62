"""Agents on tech-tree tasks: the oracle solves every one, the others take the same goal."""

from __future__ import annotations

import json

import pytest

from mirrorcraft.agents.llm.direct import DirectAgent
from mirrorcraft.agents.llm.render import VanillaPrior
from mirrorcraft.agents.plan_types import goal_of
from mirrorcraft.backends.rulesets import VANILLA, vanilla_rules
from mirrorcraft.cli import main
from mirrorcraft.evaluator.tasks import get_task, techtree_tasks
from mirrorcraft.runner.integrity import scan_episode
from mirrorcraft.runner.techtree_controls import run_techtree_controls
from tests.llm_fakes import episode as llm_episode
from tests.test_reference_agents import play


def test_the_oracle_obtains_every_tech_tree_item_in_one_world_within_budget() -> None:
    report = run_techtree_controls(["savanna-1"], [VANILLA], techtree_tasks())
    bad = [(r.task, r.actions, r.budget, r.termination) for r in report.oracle if not r.passed]
    assert bad == []
    assert len(report.oracle) == 70 and report.no_route == {VANILLA: {}}
    assert report.passed


def test_the_goal_is_the_advancement_item_or_its_tag() -> None:
    rules = vanilla_rules()
    assert goal_of(rules, get_task("obtain_iron_pickaxe").final.advancement) == (
        "items",
        ("iron_pickaxe",),
    )
    kind, items = goal_of(rules, get_task("obtain_logs").final.advancement)
    assert kind == "items" and {"oak_log", "spruce_log", "jungle_log"} <= set(items)


@pytest.mark.parametrize(
    ("rules", "task"),
    [
        ("vanilla", "obtain_redstone_torch"),
        ("vanilla", "obtain_golden_helmet"),
        ("M04", "obtain_iron_chestplate"),
        ("M03", "obtain_diamond_leggings"),
        # Fuel: chests and tables are not burnt, so it gets fuel before it smelts.
        ("M01", "obtain_hopper"),
        # Nether gold ore is not in the overworld: after a sweep it stops looking for it.
        ("M05", "obtain_gold_ingot"),
    ],
)
def test_the_adaptive_planner_completes_a_sample(rules: str, task: str) -> None:
    record, _steps, _agent = play("adaptive-planner", rules, task)
    assert record.success and record.actions_used <= get_task(task).budget
    assert list(record.milestones) == [get_task(task).final.advancement]


def test_the_oracle_climbs_out_to_a_tree_over_the_surface() -> None:
    # From deep underground, a straight shaft up to a tree would leave the body falling back
    # out of reach (and exploring for it again and again); the way over the surface is taken.
    record, _steps, _agent = play("oracle", "M02", "obtain_activator_rail", world="taiga-1")
    assert record.success and record.actions_used <= get_task("obtain_activator_rail").budget


def test_llm_prompts_name_the_task_and_its_prior() -> None:
    prior = VanillaPrior.for_task(vanilla_rules(), "obtain_compass")
    assert {"compass", "redstone", "iron_ingot"} <= prior.relevant
    record, _steps, client, _ = llm_episode(DirectAgent, "M04", "obtain_compass")
    assert record.success
    prompt = client.calls[0][0][1].content
    assert "techtree:compass" in prompt and "Compass" in prompt


def test_nothing_the_agent_sees_in_a_tech_tree_episode_names_the_rules() -> None:
    assert scan_episode("taiga-1", "M05", "obtain_iron_ingot") == []


def test_the_controls_command_checks_the_tech_tree(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["controls", "--techtree", "--world", "plains-2", "--rules", "vanilla"]
    code = main([*argv, "--rules", "M05", "--task", "group:stone", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["passed"]
    assert len(out["oracle"]) == 10 and all(r["passed"] for r in out["oracle"])
    assert out["no_route"]["vanilla"] == {}
    assert set(out["no_route"]["M05"]) == {"obtain_furnace", "obtain_stone", "obtain_charcoal"}
    assert main([*argv, "--task", "group:copper"]) == 2
    assert "unknown task group" in capsys.readouterr().err
