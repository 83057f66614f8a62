"""ADAM: causal graph and memory limits, learning from two comparable samples, bounded probes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mirrorcraft.agents.base import EpisodeContext
from mirrorcraft.agents.llm.adam import MAX_PROBES, PLAN_LIMIT, PROBE_FREE_TAIL, AdamAgent
from mirrorcraft.agents.llm.adam_causal import (
    MEMORY_CAPACITY,
    NODE_CAPACITY,
    CausalGraph,
    Transition,
    TransitionMemory,
    judge_probe,
    plan_probe,
    sample_key,
)
from mirrorcraft.agents.mock_planner import PlannerPolicy
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.llm.base import CallMeta, Message
from tests.llm_fakes import HIDDEN_PHRASES, episode
from tests.llm_fakes import M05_SHEET as SHEET

PLANKS = {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["birch_log", None]]}}
STICKS = {
    "skill": "craft_grid",
    "args": {"station": "inventory", "grid": [["birch_planks"], ["birch_planks"]]},
}
MINE_LOGS = {"skill": "mine", "args": {"block": "birch_log", "count": 3}}
PLACE_TABLE = {"skill": "place", "args": {"block": "crafting_table"}}


def line(user: str, label: str) -> Any:
    text = next(x for x in user.splitlines() if x.startswith(f"{label}: "))
    return json.loads(text[len(label) + 2 :])


def transition(
    step: int, action: dict[str, Any], added: dict[str, int], used: dict[str, int]
) -> Transition:
    return Transition(
        step, action, "x", True, "", {"birch_log": 3, "birch_planks": 8}, used, {}, added
    )


def test_adam_plays_m05_within_its_graph_and_memory_limits() -> None:
    planner = PlannerPolicy(vanilla_rules())
    record, _steps, client, agent = episode(AdamAgent, "M05", "diamond", policy=planner)
    assert record.success
    purposes = [meta.purpose for _m, meta in client.calls]
    assert {"plan", "discover", "act"} <= set(purposes)
    assert (
        record.model_calls == len(client.calls) > record.actions_used
    )  # planner/discovery calls count
    assert (
        purposes.count("act") == record.actions_used
    )  # only actor calls act here (no probe was needed)
    assert set(record.template_hashes) == {"prompt_version", "common", "adam", "observation"}
    for messages, meta in zip(planner.prompts, planner.calls, strict=True):
        if meta.purpose.startswith("act"):
            user = messages[1].content
            assert line(user, "CAUSAL_GRAPH")["nodes"] <= NODE_CAPACITY
            assert len(line(user, "CURRENT_CAUSAL_PLAN")) <= PLAN_LIMIT
    assert len(agent.graph.nodes()) <= NODE_CAPACITY and len(agent.memory) <= MEMORY_CAPACITY
    learned = [e for e in agent.graph.edges.values() if e.status == "learned"]
    assert learned and all(e.support >= 2 for e in learned)
    planks = agent.graph.edges[sample_key(PLANKS)]
    assert planks.status == "learned"  # crafted planks more than once, always the same way
    hoe = next(
        e for e in agent.graph.edges.values() if {"name": "iron_hoe", "type": "item"} in e.effects
    )
    assert hoe.status == "hypothesis" and hoe.support == 1  # the pickaxe grid was tried once


def test_a_relation_is_learned_only_from_two_comparable_samples() -> None:
    memory, graph = TransitionMemory(), CausalGraph()
    edge = {
        "sample_key": sample_key(PLANKS),
        "causes": [{"type": "item", "name": "birch_log", "count": 1}],
        "effects": [{"type": "item", "name": "birch_planks"}],
    }
    memory.add(transition(1, PLANKS, {"birch_planks": 4}, {"birch_log": 1}))
    first = graph.propose(edge, memory, 1)
    assert first is not None and first.status == "hypothesis"  # a singleton is a hypothesis
    memory.add(
        transition(
            2,
            {**PLANKS, "args": {**PLANKS["args"], "count": 1}},
            {"birch_planks": 4},
            {"birch_log": 1},
        )
    )
    graph.refresh(sample_key(PLANKS), memory)
    assert (
        graph.edges[sample_key(PLANKS)].status == "learned"
        and graph.edges[sample_key(PLANKS)].support == 2
    )
    # Two samples that disagree (different ingredients) are not comparable.
    mine = {"skill": "mine", "args": {"block": "gravel"}}
    memory.add(transition(3, mine, {"gravel": 1}, {}))
    memory.add(transition(4, mine, {"gravel": 1}, {"stick": 1}))
    gravel = graph.propose(
        {
            "sample_key": sample_key(mine),
            "causes": [],
            "effects": [{"type": "item", "name": "gravel"}],
        },
        memory,
        4,
    )
    assert gravel is not None and gravel.status == "hypothesis"
    # The model cannot invent effects or sample keys.
    assert (
        graph.propose({**edge, "effects": [{"type": "item", "name": "diamond"}]}, memory, 5) is None
    )
    assert graph.propose({**edge, "sample_key": "craft_grid {}"}, memory, 5) is None
    assert graph.edges[sample_key(PLANKS)].status == "learned"


def test_graph_never_exceeds_48_nodes_and_keeps_learned_edges() -> None:
    memory, graph = TransitionMemory(capacity=200), CausalGraph()
    for i in range(40):
        action = {"skill": "mine", "args": {"block": f"ore{i}"}}
        memory.add(transition(i, action, {f"gem{i}": 1, f"dust{i}": 1}, {}))
        if i < 3:
            memory.add(transition(i, action, {f"gem{i}": 1, f"dust{i}": 1}, {}))
        graph.propose(
            {
                "sample_key": sample_key(action),
                "causes": [{"type": "environment", "name": f"cave{i}"}],
                "effects": [
                    {"type": "item", "name": f"gem{i}"},
                    {"type": "item", "name": f"dust{i}"},
                ],
            },
            memory,
            i,
        )
        assert len(graph.nodes()) <= NODE_CAPACITY
    assert graph.evicted and all(
        graph.edges[sample_key({"skill": "mine", "args": {"block": f"ore{i}"}})].status == "learned"
        for i in range(3)
    )


def _probe_world(budget: int) -> tuple[Any, Any, Any, Any]:
    """The actor gathers logs, planks and sticks for a plan aimed at a diamond, then keeps failing."""
    planner = PlannerPolicy(vanilla_rules())
    script = [MINE_LOGS, PLANKS, PLANKS, STICKS]

    def policy(messages: Sequence[Message], meta: CallMeta | None) -> str:
        assert meta is not None
        if meta.contract == "adam_plan":
            return json.dumps({"subgoals": [{"target": "diamond", "reason": "the goal"}]})
        if meta.contract == "adam_action":
            step = meta.extra["obs"].step
            return json.dumps(
                {
                    "thought": "",
                    "subgoal": "diamond",
                    **(script[step] if step < len(script) else PLACE_TABLE),
                }
            )
        return planner(messages, meta)

    return episode(AdamAgent, "vanilla", "diamond", policy=policy, budget=budget)


def test_at_most_two_probes_only_when_blocked_and_each_costs_one_action() -> None:
    record, steps, client, agent = _probe_world(30)
    assert len(agent.probes) == MAX_PROBES
    probe_steps = [i for i, s in enumerate(steps) if s.thought.startswith("probe")]
    assert len(probe_steps) == MAX_PROBES and record.actions_used == len(steps) == 30
    for i in probe_steps:
        assert not steps[i - 1].result["ok"]  # scheduled because the last action failed
        assert (
            steps[i].action["skill"] == "craft_grid"
        )  # an ordinary primitive on the current inventory
    act_steps = {
        meta.extra["obs"].step for _m, meta in client.calls if meta.purpose.startswith("act")
    }
    assert not act_steps & set(probe_steps)  # the causal module, not the actor, chose these actions
    assert all(p["remaining"] > PROBE_FREE_TAIL for p in agent.probes)
    assert {agent.graph.edges[p["edge"]].status for p in agent.probes} == {"verified"}
    # More uncertain edges remain, a probe for one is still doable, the agent is still stuck: the cap binds.
    left = [e for e in agent.graph.related("diamond", agent.memory)]
    assert any(
        plan_probe(e, agent.memory, client.calls[-1][1].extra["obs"], agent.tried) for e in left
    )
    assert agent._stuck()


def test_no_probe_in_the_final_twelve_actions() -> None:
    _record, steps, client, agent = _probe_world(18)  # first chance with 13 actions left: probes
    assert agent.probes and agent.probes[0]["remaining"] == PROBE_FREE_TAIL + 1
    record, steps, client, agent = _probe_world(
        17
    )  # first chance with 12 left: none, however stuck
    assert not agent.probes and not any(s.thought.startswith("probe") for s in steps)
    obs = client.calls[-1][1].extra["obs"]
    assert agent._stuck() and obs.budget.remaining <= PROBE_FREE_TAIL
    assert any(
        plan_probe(e, agent.memory, obs, agent.tried)
        for e in agent.graph.related("diamond", agent.memory)
    )
    assert record.actions_used == 17


def test_probe_outcomes_verify_or_reject() -> None:
    memory, graph = TransitionMemory(), CausalGraph()
    pick = {
        "skill": "craft_grid",
        "args": {
            "station": "crafting_table",
            "grid": [["iron_ingot"] * 3, [None, "stick", None], [None, "stick", None]],
        },
    }
    memory.add(transition(1, pick, {"iron_hoe": 1}, {"iron_ingot": 3, "stick": 2}))
    edge = graph.propose(
        {
            "sample_key": sample_key(pick),
            "causes": [{"type": "item", "name": "iron_ingot", "count": 3}],
            "effects": [{"type": "item", "name": "iron_hoe"}],
        },
        memory,
        1,
    )
    assert edge is not None
    probe = {
        "action": pick,
        "edge": edge.sample_key,
        "kind": "remove_factor",
        "factor": "iron_ingot",
    }
    assert (
        judge_probe(probe, edge, False, set()).endswith("effect disappeared")
        and edge.status == "verified"
    )
    assert edge.causes[0]["intervention"] == "needed"
    edge.status = "learned"
    judge_probe({**probe, "kind": "replicate"}, edge, True, {"iron_nugget"})
    assert edge.status == "rejected"


def test_hidden_and_disclosed_conditions() -> None:
    _r, _s, hidden, _ = episode(AdamAgent, "M05", "diamond", budget=20)
    for messages, _meta in hidden.calls:
        text = messages[0].content + messages[1].content
        assert SHEET not in text and not any(p in text for p in HIDDEN_PHRASES)
    _r2, _s2, disclosed, agent = episode(AdamAgent, "M05", "diamond", sheet=SHEET, budget=20)
    for messages, meta in disclosed.calls:
        assert SHEET in messages[0].content, meta.purpose
    _a, _b, van, _ = episode(AdamAgent, "vanilla", "diamond", budget=2)
    _c, _d, mir, _ = episode(AdamAgent, "M05", "diamond", budget=2)
    assert [m[0].content + m[1].content for m, _ in van.calls] == [
        m[0].content + m[1].content for m, _ in mir.calls
    ]
    agent.start(EpisodeContext("diamond", "Diamond", 50, 3))
    assert not agent.graph.edges and not len(agent.memory) and not agent.plan and not agent.probes


def test_a_quoted_cause_count_is_read() -> None:
    """A discovery reply giving a cause's count quoted ("count": "3") had it read as 1."""
    memory, graph = TransitionMemory(), CausalGraph()
    memory.add(transition(1, PLANKS, {"birch_planks": 4}, {"birch_log": 3}))
    edge = graph.propose(
        {
            "sample_key": sample_key(PLANKS),
            "causes": [{"type": "item", "name": "birch_log", "count": "3"}],
            "effects": [{"type": "item", "name": "birch_planks"}],
        },
        memory,
        1,
    )
    assert edge is not None and edge.causes == [{"type": "item", "name": "birch_log", "count": 3}]
