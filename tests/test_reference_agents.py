"""Reference agents: what each believes, learns, and forgets between episodes."""

from __future__ import annotations

import asyncio

from mirrorcraft.agents.base import EpisodeContext
from mirrorcraft.agents.knowledge import build_belief
from mirrorcraft.agents.reference import AdaptivePlannerAgent, RandomAgent, make_reference_agent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.body.actions import Action, parse_action
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.registry import load_world


def play(
    agent_name: str, rules: str, task: str, world: str = "plains-1", agent: object | None = None
):  # type: ignore[no-untyped-def]
    active, vanilla = resolve_rules(rules), vanilla_rules()
    agent = agent or make_reference_agent(agent_name, active, vanilla)
    spec = EpisodeSpec("t", "t", world, rules, get_task(task), agent_name, "none", "hidden", 0, 1)
    record, steps = asyncio.run(run_episode(spec, agent, load_world(world), active, vanilla))  # type: ignore[arg-type]
    return record, steps, agent


def test_vanilla_planner_never_revises_and_fails_where_vanilla_beliefs_mislead() -> None:
    record, _steps, agent = play("vanilla-planner", "M05", "diamond")
    assert not record.success  # it keeps crafting an iron pickaxe that never comes out
    pick = next(c for c in agent.belief.crafts if c.key == "minecraft:iron_pickaxe")
    assert pick.outputs == (("iron_pickaxe", 1),)
    record, _steps, agent = play("vanilla-planner", "M04", "iron_armor")
    assert (
        agent.belief.blocks["iron_ore"].yields
        == build_belief(vanilla_rules()).blocks["iron_ore"].yields
    )
    assert play("vanilla-planner", "vanilla", "iron_armor")[0].success


def test_adaptive_planner_learns_from_outcomes_and_recovers() -> None:
    record, _steps, agent = play("adaptive-planner", "M04", "iron_armor")
    assert record.success
    assert agent.belief.blocks["iron_ore"].yields.get("raw_iron_block", 0) > 0
    record, steps, agent = play("adaptive-planner", "M05", "diamond")
    assert record.success
    pick = next(c for c in agent.belief.crafts if c.key == "minecraft:iron_pickaxe")
    assert pick.outputs == (("iron_hoe", 1),)  # what it saw the recipe make
    assert any(
        s.action["skill"] == "smelt" and s.action["args"]["input"] == "iron_hoe" for s in steps
    )


def test_state_is_cleared_between_episodes() -> None:
    agent = AdaptivePlannerAgent(vanilla_rules())
    play("adaptive-planner", "M05", "diamond", agent=agent)
    pick = next(c for c in agent.belief.crafts if c.key == "minecraft:iron_pickaxe")
    assert pick.outputs == (("iron_hoe", 1),) and agent.probed
    agent.start(EpisodeContext("diamond", "Diamond", 50, 1))
    fresh = build_belief(vanilla_rules())
    assert [c.outputs for c in agent.belief.crafts] == [c.outputs for c in fresh.crafts]
    assert not agent.probes and not agent.probed and not agent.memory.failures


def test_oracle_is_given_the_active_rules() -> None:
    record, _steps, agent = play("oracle", "M05", "diamond")
    assert record.success and agent.rules is resolve_rules("M05")


def test_random_agent_sends_well_formed_actions() -> None:
    _record, steps, _agent = play("random", "vanilla", "diamond")
    assert steps and all(isinstance(parse_action(s.action), Action) for s in steps)
    assert isinstance(RandomAgent(vanilla_rules()).name, str)


def test_planner_does_not_repeat_an_action_that_failed_with_the_same_inventory() -> None:
    """A failure is keyed by the action and the inventory it failed in: the planner does not
    pick that step while both match (here it has no other way: no step), and picks it
    again once the inventory differs."""
    from mirrorcraft.agents.plan_types import action_key, inventory_key
    from mirrorcraft.backends.sim import SimEpisode

    rules = vanilla_rules()
    task = get_task("iron_armor")
    agent = make_reference_agent("vanilla-planner", rules, rules)
    agent.start(EpisodeContext(task.id, task.title, task.budget, 0, None))
    obs = SimEpisode(load_world("plains-1"), rules, rules, task, seed=0).observe()
    first = agent.next_step(obs)
    assert first is not None and agent.memory.failures == set()
    agent.memory.failures.add((action_key(first.action), inventory_key(obs.inventory)))
    second = agent.next_step(obs)
    assert second is None or second.action != first.action
    agent.memory.failures = {(action_key(first.action), inventory_key({"stick": 1}))}
    again = agent.next_step(obs)
    assert again is not None and again.action == first.action
