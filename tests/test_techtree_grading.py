"""Grading tech-tree tasks: the evaluator grants a task's item advancement and nothing else."""

from __future__ import annotations

from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.evaluator.milestones import MilestoneTracker, tracked_advancements
from mirrorcraft.evaluator.tasks import get_task, progression_tasks, techtree_tasks
from mirrorcraft.rules.items import ItemStack
from tests.simtools import act, episode


def _gain(tracker: MilestoneTracker, item: str, step: int) -> list[str]:
    stack = ItemStack(item, 1)
    return tracker.inventory_changed([stack], [stack], step)


def test_obtaining_the_item_completes_the_task_and_another_item_does_not() -> None:
    tracker = MilestoneTracker(vanilla_rules(), get_task("obtain_iron_pickaxe"))
    assert _gain(tracker, "iron_axe", 1) == []
    assert _gain(tracker, "iron_ingot", 2) == ["story/smelt_iron"]
    assert not tracker.success() and tracker.score() == 0
    assert _gain(tracker, "iron_pickaxe", 3) == ["story/iron_tools", "techtree:iron_pickaxe"]
    assert tracker.success() and tracker.score() == 100
    assert tracker.milestone_steps() == {"techtree:iron_pickaxe": 3}


def test_tag_tasks_accept_any_member_of_the_tag() -> None:
    for item in ("spruce_log", "jungle_log", "acacia_log", "birch_log"):
        tracker = MilestoneTracker(vanilla_rules(), get_task("obtain_logs"))
        _gain(tracker, item, 1)
        assert tracker.success()
    tracker = MilestoneTracker(vanilla_rules(), get_task("obtain_planks"))
    _gain(tracker, "stick", 1)
    _gain(tracker, "oak_log", 2)
    assert not tracker.success()
    _gain(tracker, "jungle_planks", 3)
    assert tracker.success()


def test_a_task_tracks_vanilla_advancements_and_only_its_own_task_advancement() -> None:
    rules = vanilla_rules()
    for task_id in progression_tasks():
        assert all(":" not in a for a in tracked_advancements(rules, get_task(task_id)))
    own = [a for a in tracked_advancements(rules, get_task("obtain_torch")) if ":" in a]
    assert own == ["techtree:torch"]
    assert {"story/mine_stone", "story/enchant_item"} <= set(
        tracked_advancements(rules, get_task("obtain_torch"))
    )
    assert len(techtree_tasks()) == 70


def test_an_episode_ends_when_the_item_is_crafted() -> None:
    ep = episode(task="obtain_stick", inventory={"oak_planks": 6})
    out = act(ep, "craft_grid", station="inventory", grid=[["oak_planks", "oak_planks"]] * 2)
    assert out.result.ok and not out.terminated and out.score == 0  # a crafting table
    out = act(ep, "craft_grid", station="inventory", grid=[["oak_planks"], ["oak_planks"]])
    assert out.result.ok and dict(out.result.produced) == {"stick": 4}
    assert out.terminated and out.score == 100 and out.new_milestones == ("techtree:stick",)
    assert ep.evaluator.success()


def test_task_advancements_never_show_in_other_tasks_observations() -> None:
    start = {"oak_log": 4}
    for task in ("iron_armor", "obtain_stick"):
        ep = episode(task=task, inventory=start)
        act(ep, "craft_grid", station="inventory", grid=[["oak_log"]])
        out = act(ep, "craft_grid", station="inventory", grid=[["oak_planks"], ["oak_planks"]])
        done = out.observation.progress.completed_advancements
        assert "techtree:planks" not in done and "techtree:logs" not in done
        assert all(":" not in a for a in done if a != "techtree:stick")
        assert ("techtree:stick" in done) == (task == "obtain_stick")
        text = out.observation.render_text()
        assert "techtree:planks" not in text and "techtree:logs" not in text
