"""The MineEvolve paper's baselines: each one's defining mechanism, with scripted or mock models."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from mirrorcraft.agents.baselines.deps import DepsAgent, needs_of, proximity
from mirrorcraft.agents.baselines.executor import estimate_tokens
from mirrorcraft.agents.baselines.jarvis1 import Jarvis1Agent
from mirrorcraft.agents.baselines.memory import MemoryOpError, RecordMemory
from mirrorcraft.agents.baselines.optimus1 import Optimus1Agent
from mirrorcraft.agents.baselines.optimus2 import Optimus2Agent
from mirrorcraft.agents.mineevolve.plan import parse_subgoal
from mirrorcraft.agents.mock_planner import WRITERS, PlannerPolicy
from mirrorcraft.agents.registry import LLM_AGENTS, MOCK_MODEL, make_agent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.body.observation import Nearby
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.llm.base import CallMeta, Message
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.registry import load_world
from tests.llm_fakes import HIDDEN_PHRASES, FakeClient

V = vanilla_rules()


def play(
    agent: Any,
    *,
    task: str = "obtain_wooden_pickaxe",
    rules: str = "vanilla",
    world: str = "plains-1",
    budget: int | None = None,
    seed: int = 1,
) -> Any:
    t = get_task(task) if budget is None else get_task(task).with_budget(budget)
    spec = EpisodeSpec("t", "t", world, rules, t, agent.name, "fake", "hidden", 0, seed)
    record, _steps = asyncio.run(
        run_episode(spec, agent, load_world(world), resolve_rules(rules), V)
    )
    return record


def purposes(client: FakeClient) -> list[str]:
    return [meta.purpose for _m, meta in client.calls if meta is not None]


def subgoal(condition: str, skill: str, args: dict[str, Any], check: dict[str, Any], **kw: Any):
    return {
        "subgoal_id": kw.pop("sid", "sg_001"),
        "condition": condition,
        "action": {"skill": skill, "args": args},
        "checks": [check],
        "max_actions": 2,
        **kw,
    }


TABLE_PICKAXE = subgoal(
    "craft a wooden pickaxe at a table",
    "craft_grid",
    {
        "station": "crafting_table",
        "grid": [["oak_planks"] * 3, [None, "stick", None], [None, "stick", None]],
    },
    {"type": "inv_gain", "item": "wooden_pickaxe", "n": 1},
)
GET_LOGS = subgoal("get logs", "mine", {"block": "log", "count": 2}, {"type": "action_ok"})


# -- DEPS -------------------------------------------------------------------------------------------


def deps_script(messages: Sequence[Message], meta: CallMeta | None) -> str:
    assert meta is not None
    if meta.purpose == "explain":
        return json.dumps(
            {
                "explanation": "there is no crafting table and no planks",
                "missing": ["crafting_table"],
            }
        )
    if meta.extra.get("revision"):
        return json.dumps({"subgoals": [GET_LOGS]})
    return json.dumps({"subgoals": [TABLE_PICKAXE]})


def test_deps_explains_a_failure_and_revises_its_plan() -> None:
    client = FakeClient(deps_script)
    agent = DepsAgent("deps", client, V)
    record = play(agent, budget=4)
    assert purposes(client)[:3] == ["plan", "explain", "plan"]
    explain_prompt = client.calls[1][0][1].content
    assert "DESCRIPTION:" in explain_prompt and "sg_001" in explain_prompt
    assert "[failed]" in explain_prompt  # the plan is shown with the failed subgoal marked
    revised_prompt = client.calls[2][0][1].content
    assert "there is no crafting table and no planks" in revised_prompt
    assert "did not finish" in revised_prompt  # the description reaches the planner
    # The revised plan is what runs next: it mines logs.
    assert agent.completed and agent.completed[0].condition == "get logs"
    assert record.memory["replans"] >= 1 and record.memory["explanations"] >= 1
    assert set(record.template_hashes) == {
        "prompt_version",
        "common",
        "baselines",
        "deps",
        "observation",
    }


def test_deps_selector_runs_the_nearest_ready_subgoal_first() -> None:
    far = subgoal(
        "find iron",
        "explore",
        {"target": "diamond_ore"},
        {"type": "visible", "target": "diamond_ore"},
        sid="a",
        needs=[],
    )
    near = subgoal(
        "get logs", "mine", {"block": "log", "count": 1}, {"type": "action_ok"}, sid="b", needs=[]
    )

    def script(messages: Sequence[Message], meta: CallMeta | None) -> str:
        return json.dumps({"subgoals": [far, near]})

    client = FakeClient(script)
    agent = DepsAgent("deps", client, V)
    record = play(agent, budget=1)
    assert record.actions_used == 1
    assert agent.history.steps[0].action["skill"] == "mine"  # the seen tree beats the unseen ore
    assert record.memory["selections"] == 1

    # Without "needs" the plan order holds: the explore subgoal runs first.
    def ordered(messages: Sequence[Message], meta: CallMeta | None) -> str:
        plain = [{k: v for k, v in s.items() if k != "needs"} for s in (far, near)]
        return json.dumps({"subgoals": plain})

    agent = DepsAgent("deps", FakeClient(ordered), V)
    play(agent, budget=1)
    assert agent.history.steps[0].action["skill"] == "explore"


def test_deps_proximity_and_dependencies() -> None:
    sg = parse_subgoal(GET_LOGS, 0, 4)
    craft = parse_subgoal(TABLE_PICKAXE, 0, 4)
    assert not isinstance(sg, str) and not isinstance(craft, str)

    obs = SimpleNamespace(
        nearby_blocks=[Nearby("oak_log", 6.0)], nearby_entities=[], nearby_drops=[], facilities=[]
    )

    assert proximity(craft, obs) == 0.0  # type: ignore[arg-type]
    assert proximity(sg, obs) == 6.0  # type: ignore[arg-type]
    raw = [{"needs": []}, {}, {"needs": ["a", "zz"]}]
    assert needs_of(raw, ["a", "b", "c"]) == {"a": (), "b": ("a",), "c": ("a",)}


# -- JARVIS-1 ---------------------------------------------------------------------------------------


def test_jarvis1_stores_a_successful_plan_and_retrieves_it_in_a_later_episode() -> None:
    policy = PlannerPolicy(V)
    client = FakeClient(policy)
    agent = Jarvis1Agent("jarvis1", client, V, options={"memory": "carry"})
    first = play(agent, task="obtain_stone_pickaxe")
    assert first.success and first.memory["store_at_start"] == {"plan": 0}
    assert first.memory["store_at_end"] == {"plan": 1} and first.memory["memory_calls"] == 0
    [(key, entry)] = agent.memory.of_kind("plan")
    assert entry["task"] == "obtain_stone_pickaxe" and len(entry["steps"]) >= 5
    assert entry["situation"]["biome"] == "plains"
    calls_before = len(client.calls)
    second = play(agent, task="obtain_stone_pickaxe", seed=2)
    assert second.success
    later = [meta for _m, meta in client.calls[calls_before:] if meta and meta.purpose == "plan"]
    assert later[0].extra["examples"][0]["id"] == key  # retrieved as an example
    prompt = client.calls[calls_before][0][1].content
    assert "for task obtain_stone_pickaxe (similarity" in prompt
    # The mock reused the stored plan: its subgoals name the entry they came from, so the
    # second episode needs far fewer plan calls than the first.
    assert any(sg.source == f"plan:{key}" for sg in agent.completed)
    assert second.memory["calls"]["plan"] < first.memory["calls"]["plan"]
    grown = second.memory.get("plans_added", 0) + second.memory.get("plans_reinforced", 0)
    assert grown == 1 and len(agent.memory.of_kind("plan")) == 1 + second.memory.get(
        "plans_added", 0
    )


def test_jarvis1_memory_moves_through_operations_and_ranks_by_task_then_situation() -> None:
    donor = Jarvis1Agent("jarvis1", FakeClient(PlannerPolicy(V)), V)
    play(donor, task="obtain_stone_pickaxe")
    ops = donor.knowledge_delta()
    assert ops and ops[0]["op"] == "put" and ops[0]["record"]["kind"] == "plan"
    agent = Jarvis1Agent("jarvis1", FakeClient(PlannerPolicy(V)), V)
    agent.load_knowledge(ops, writable=False)
    record = play(agent, task="obtain_stone_axe")
    assert record.memory["store_at_start"] == {"plan": 1} and agent.knowledge_delta() == []
    entry = agent.memory.of_kind("plan")[0][1]
    # Another task of the same tier is similar, an unrelated one less so.
    agent.route = ["cobblestone", "stick", "stone_axe", "oak_planks"]
    similar = agent.score(entry, entry["situation"])
    agent.route = ["diamond"]
    assert agent.score(entry, entry["situation"]) < similar
    with pytest.raises(MemoryOpError):
        RecordMemory.replay([{"op": "put", "id": "x", "record": {"no": "kind"}}])


def test_jarvis1_shows_a_long_plan_from_its_start_within_the_token_budget() -> None:
    agent = Jarvis1Agent("jarvis1", FakeClient(PlannerPolicy(V)), V, options={"memory": "carry"})
    play(agent, task="obtain_iron_pickaxe")
    [(key, entry)] = agent.memory.of_kind("plan")
    long = {**entry, "steps": entry["steps"] * 4}  # four times the plan: far over 512 tokens
    agent.memory.put(key, long)
    assert "craft_grid(grid=[birch_planks,birch_planks" in agent.render(entry, 1.0) or (
        "craft_grid(grid=[oak_planks" in agent.render(entry, 1.0)
    )
    obs = agent._last_obs
    assert obs is not None
    [(got, _e, text)] = agent.retrieve(obs)
    assert got == key and "more subgoals)" in text
    assert estimate_tokens(text + "\n") <= agent.limits.budget_tokens


# -- Optimus-1 --------------------------------------------------------------------------------------


def test_optimus1_graph_gains_an_edge_from_an_observed_craft_and_plans_with_it() -> None:
    policy = PlannerPolicy(V)
    client = FakeClient(policy)
    agent = Optimus1Agent("optimus1", client, V, options={"memory": "carry"})
    first = play(agent, task="obtain_stick")
    assert first.success
    edges = dict(agent.memory.of_kind("edge"))
    stick = [e for e in edges.values() if e["output"] == "stick"]
    assert stick and stick[0]["via"] == "craft" and stick[0]["station"] == "inventory"
    assert sum(stick[0]["inputs"].values()) == 2 and stick[0]["yield"] == 4
    assert any(e["via"] == "mine" for e in edges.values())
    [(_k, exp)] = agent.memory.of_kind("experience")
    assert exp["success"] and exp["task"] == "obtain_stick" and exp["subgoals"]
    calls_before = len(client.calls)
    play(agent, task="obtain_wooden_pickaxe", seed=2)
    prompt = client.calls[calls_before][0][1].content
    assert "- wooden_pickaxe: no known source yet" in prompt
    assert "- stick (level 2): craft from birch_planks x2 at inventory (gives 4)" in prompt
    assert "task obtain_stick: success" in prompt  # the experience pool is consulted
    assert {"edge", "experience"} == set(first.memory["store_at_end"])


def test_optimus1_reflector_judges_a_failed_subgoal_and_failures_are_remembered() -> None:
    verdicts = iter(["continue", "replan"])

    def script(messages: Sequence[Message], meta: CallMeta | None) -> str:
        assert meta is not None
        if meta.purpose == "reflect":
            return json.dumps({"judgement": next(verdicts, "replan"), "reason": "no table"})
        return json.dumps({"subgoals": [TABLE_PICKAXE]})

    client = FakeClient(script)
    agent = Optimus1Agent("optimus1", client, V)
    record = play(agent, budget=8)
    assert not record.success
    calls = purposes(client)
    assert calls[:4] == ["plan", "reflect", "reflect", "plan"]
    assert record.memory["reflect_continue"] == 1 and record.memory["reflect_replan"] >= 1
    assert record.memory["memory_calls"] == calls.count("reflect")
    [(_k, exp)] = agent.memory.of_kind("experience")
    assert (
        exp["success"] is False
        and exp["failures"]
        and "craft a wooden pickaxe" in exp["last_failure"]
    )


# -- Optimus-2 --------------------------------------------------------------------------------------


def test_optimus2_acts_once_per_call_conditioned_on_goal_and_behaviour_history() -> None:
    policy = PlannerPolicy(V)
    client = FakeClient(policy)
    agent = Optimus2Agent(
        "optimus2", client, V, options={"settings": {"optimus2": {"history_length": 3}}}
    )
    record = play(agent, task="obtain_crafting_table")
    assert record.success
    calls = Counter(purposes(client))
    assert calls["act"] == record.actions_used and calls["plan"] >= 1
    acts = [m for m, meta in client.calls if meta and meta.purpose == "act"]
    assert "RECENT BEHAVIOUR (oldest first):\n(nothing yet)" in acts[0][1].content
    last = acts[-1][1].content
    history = last.split("RECENT BEHAVIOUR (oldest first):\n")[1].split("\nCURRENT OBSERVATION")[0]
    assert 1 <= len(history.splitlines()) <= 3 and "did {" in history
    assert "CURRENT GOAL:" in last


# -- all of them ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["deps", "jarvis1", "optimus1", "optimus2"])
def test_every_baseline_plays_with_the_offline_mock_model(name: str) -> None:
    agent = make_agent(name, active=V, vanilla=V, model=MOCK_MODEL)
    record = play(agent, task="obtain_iron_pickaxe")
    assert record.success and record.memory["json_repairs"] == 0
    assert record.model_calls == sum(record.memory["calls"].values()) or name == "optimus2"


@pytest.mark.parametrize("name", ["deps", "jarvis1", "optimus1", "optimus2"])
def test_baseline_prompts_never_name_the_rule_suite(name: str) -> None:
    client = FakeClient(PlannerPolicy(V))
    agent = make_agent(name, active=resolve_rules("M01"), vanilla=V, client=client)
    play(agent, rules="M01", task="obtain_iron_ingot")
    text = "\n".join(m.content for msgs, _meta in client.calls for m in msgs)
    assert "M01" not in text and not [p for p in HIDDEN_PHRASES if p.lower() in text.lower()]


def test_the_mock_answers_every_configuration_contract() -> None:
    contracts = {
        "deps": ("plan", "explain"),
        "jarvis1": ("plan",),
        "optimus1": ("plan", "reflect"),
        "optimus2": ("plan", "act"),
        "mineevolve": ("plan", "repair", "skill", "remedy", "reflection", "curate"),
    }
    assert set(contracts) <= set(LLM_AGENTS)
    missing = [f"{a}_{p}" for a, ps in contracts.items() for p in ps if f"{a}_{p}" not in WRITERS]
    assert missing == []


def test_baseline_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown deps options"):
        DepsAgent("deps", FakeClient(PlannerPolicy(V)), V, options={"colour": 1})
    with pytest.raises(ValueError, match="max_revisions"):
        DepsAgent(
            "deps",
            FakeClient(PlannerPolicy(V)),
            V,
            options={"settings": {"deps": {"max_revisions": -1}}},
        )
    agent = make_agent(
        "deps",
        active=V,
        vanilla=V,
        model=MOCK_MODEL,
        options={"settings": {"executor": {"max_actions": 2}}},
    )
    assert isinstance(agent, DepsAgent) and agent.limits.executor.max_actions == 2


def test_a_deps_need_naming_a_long_subgoal_id_is_kept() -> None:
    """A subgoal id is kept to 32 characters; a "needs" entry naming a longer id as the model
    wrote it matched nothing and was dropped, so the subgoal could run before what it needs."""
    long_id = "sg_gather_three_oak_logs_for_the_table"
    raw = [
        {"subgoal_id": long_id, "condition": "logs", "action": {"skill": "mine", "args": {}}},
        {"subgoal_id": "sg_planks", "needs": [long_id]},
    ]
    ids = [long_id[:32], "sg_planks"]
    assert needs_of(raw, ids) == {long_id[:32]: (), "sg_planks": (long_id[:32],)}
