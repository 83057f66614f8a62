"""The integrity and reachability controls over all 10 worlds x 7 rule sets x 3 tasks."""

from __future__ import annotations

import json

import pytest

from mirrorcraft.backends.rulesets import VANILLA
from mirrorcraft.datapack.suites import list_suites
from mirrorcraft.evaluator.tasks import progression_tasks
from mirrorcraft.runner.controls import ControlReport, run_controls
from mirrorcraft.runner.integrity import scan_episode, scan_text
from mirrorcraft.world.registry import world_ids

RULES = [VANILLA, *(m.id for m in list_suites())]


@pytest.fixture(scope="module")
def report() -> ControlReport:
    return run_controls(world_ids(), RULES, progression_tasks())


def test_every_world_suite_task_has_a_route_and_the_oracle_completes_it(
    report: ControlReport,
) -> None:
    assert len(report.rows) == 10 * 7 * 3
    bad = [
        (r.world, r.rules, r.task, r.oracle_actions)
        for r in report.rows
        if not (r.route and r.oracle_success)
    ]
    assert not bad
    assert all(r.oracle_actions <= r.budget for r in report.rows)


def test_twins_are_identical_until_a_changed_rule_fires(report: ControlReport) -> None:
    assert all(r.twins_equal and r.neutral_equal for r in report.rows)


def test_every_change_is_observable_and_logged(report: ControlReport) -> None:
    assert report.observability and all(o.passed for o in report.observability)
    changes = {(o.rules, o.change) for o in report.observability}
    assert changes == {(m.id, i) for m in list_suites() for i in range(len(m.changes))}


def test_every_change_lies_on_a_route(report: ControlReport) -> None:
    assert report.off_route == []


@pytest.mark.parametrize("rules", RULES)
def test_nothing_the_agent_sees_names_the_rules(rules: str) -> None:
    for task in progression_tasks():
        assert scan_episode("savanna-2", rules, task) == []


def test_the_scan_catches_leaks() -> None:
    tokens = ["Compressed resource drops"]
    for text in [
        '{"rule": "loot_tables/minecraft:blocks/iron_ore"}',
        "world plains-1@M04",
        "suite M03",
        "Compressed resource drops",
        '{"recipe": "mirrorcraft:iron_pickaxe_from_smelting_iron_hoe"}',
    ]:
        assert scan_text(text, tokens), text
    assert not scan_text('{"inventory": {"raw_iron_block": 1}}', tokens)


def test_a_short_suite_id_is_a_leak_as_a_word_not_inside_a_random_id() -> None:
    """A designed suite D07 failed its controls now and then: the remote protocol's random
    episode token (32 hex digits) held "d07" about once in 140 episodes."""
    tokens = ["D07"]
    for text in ("set D07 here", '{"rules": "d07"}', "plains-1@D07/iron_armor"):
        assert [t for t, _ in scan_text(text, tokens)] == ["D07"], text
    token = "5f2ad07c9e1b4a6d8f0e3c2b1a9d8e7f"
    assert not scan_text(json.dumps({"episode": token, "step": 3}), tokens)
