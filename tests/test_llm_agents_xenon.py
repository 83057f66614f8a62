"""XENON: graph prior, outcome corrections, failure-aware memory, retrieval and replanning limits."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mirrorcraft.agents.base import EpisodeContext
from mirrorcraft.agents.llm.xenon import FAILURES_BEFORE_REPLAN, XenonAgent
from mirrorcraft.agents.llm.xenon_graph import (
    GRAPH_CAPACITY,
    MEMORY_CAPACITY,
    RETRIEVE_LIMIT,
    ActionMemory,
    DependencyGraph,
    MemoryEntry,
)
from mirrorcraft.agents.mock_planner import PlannerPolicy
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.llm.base import CallMeta, Message
from tests.llm_fakes import HIDDEN_PHRASES, episode
from tests.llm_fakes import M05_SHEET as SHEET


def line(user: str, label: str) -> Any:
    text = next(x for x in user.splitlines() if x.startswith(f"{label}: "))
    return json.loads(text[len(label) + 2 :])


def test_xenon_corrects_its_graph_from_an_unexpected_craft_output_in_m05() -> None:
    planner = PlannerPolicy(vanilla_rules())
    record, _steps, client, agent = episode(XenonAgent, "M05", "diamond", policy=planner)
    assert record.success
    calls = [meta.purpose for _m, meta in client.calls]
    assert calls[0] == "init_graph" and calls.count("init_graph") == 1
    # The prior call counts too, and so does each proposal its failure memory sent back
    # (here: an explore repeated after it failed, with the inventory unchanged).
    assert calls.count("act_rejected") <= 2
    assert (
        record.model_calls
        == len(client.calls)
        == record.actions_used + 1 + calls.count("act_rejected")
    )
    assert set(record.template_hashes) == {"prompt_version", "common", "xenon", "observation"}
    # The iron pickaxe grid made an iron hoe: a contradiction, seen only through the agent's own result.
    hoe = next(c for c in agent.contradictions if c["subgoal"] == "iron_pickaxe")
    assert hoe["produced"] == {"iron_hoe": 1} and hoe["consumed"] == {"iron_ingot": 3, "stick": 2}
    after = next(
        m
        for m, meta in client.calls
        if meta.purpose == "act" and meta.extra["obs"].step == hoe["step"]
    )
    frontier, graph = (
        line(after[1].content, "CURRENT_GRAPH_FRONTIER"),
        line(after[1].content, "ADAPTIVE_DEPENDENCY_GRAPH"),
    )
    nodes = {n["item"]: n for n in graph["nodes"]}
    assert "iron_pickaxe" in frontier["revisionNeeded"]
    assert nodes["iron_pickaxe"]["status"] == "revisionNeeded"
    assert {r["item"]: r["status"] for r in nodes["iron_pickaxe"]["requirements"]}.get(
        "iron_ingot"
    ) == "contradicted"
    assert nodes["iron_hoe"]["status"] == "verified"
    assert {r["item"] for r in nodes["iron_hoe"]["requirements"]} == {
        "iron_ingot",
        "stick",
        "crafting_table",
    }
    # Smelting the hoe gave the pickaxe: the graph now holds the route actually observed.
    pick = agent.graph.nodes["iron_pickaxe"]
    assert pick.status == "verified" and "iron_hoe" in {r.item for r in pick.requirements}
    memory = line(after[1].content, "FAILURE_AWARE_ACTION_MEMORY")
    assert any(
        e["subgoal"] == "iron_pickaxe" and e["outcome"] == "unexpected_output" for e in memory
    )
    # Limits, read from what the model was actually shown.
    for messages, meta in zip(planner.prompts, planner.calls, strict=True):
        if meta.purpose.startswith("act"):
            assert (
                len(line(messages[1].content, "ADAPTIVE_DEPENDENCY_GRAPH")["nodes"])
                <= GRAPH_CAPACITY
            )
            assert len(line(messages[1].content, "FAILURE_AWARE_ACTION_MEMORY")) <= RETRIEVE_LIMIT
    assert len(agent.graph.nodes) <= GRAPH_CAPACITY and len(agent.memory) <= MEMORY_CAPACITY
    assert max(agent.retrieved_counts) <= RETRIEVE_LIMIT


def test_two_failures_on_one_subgoal_replan_from_the_updated_frontier() -> None:
    planner = PlannerPolicy(vanilla_rules())
    script = [
        {
            "thought": "",
            "subgoal": "crafting_table",
            "skill": "place",
            "args": {"block": "crafting_table"},
        },
        {
            "thought": "",
            "subgoal": "crafting_table",
            "skill": "craft_grid",
            "args": {
                "station": "inventory",
                "grid": [["oak_planks", "oak_planks"], ["oak_planks", "oak_planks"]],
            },
        },
    ]

    def policy(messages: Sequence[Message], meta: CallMeta | None) -> str:
        assert meta is not None
        if meta.purpose == "act" and meta.extra["obs"].step < len(script):
            return json.dumps(script[meta.extra["obs"].step])
        return planner(messages, meta)

    _record, steps, client, agent = episode(
        XenonAgent, "vanilla", "diamond", policy=policy, budget=6
    )
    assert [s.result["ok"] for s in steps[:2]] == [False, False]
    assert len(agent.replans) >= 1
    replan = agent.replans[0]
    assert replan["step"] == FAILURES_BEFORE_REPLAN and replan["subgoal"] == "crafting_table"
    assert (
        "crafting_table" in replan["revision_needed"]
        and "crafting_table" not in replan["frontier_after"]
    )
    third = next(
        m for m, meta in client.calls if meta.purpose == "act" and meta.extra["obs"].step == 2
    )
    shown = line(third[1].content, "CURRENT_GRAPH_FRONTIER")
    assert shown["replanned"]["after_failures_on"] == "crafting_table"
    assert "crafting_table" in shown["revisionNeeded"]
    failures = [
        e
        for e in line(third[1].content, "FAILURE_AWARE_ACTION_MEMORY")
        if e["subgoal"] == "crafting_table"
    ]
    assert failures and all(e["invalid_for_subgoal"] for e in failures)


def test_an_action_marked_invalid_for_its_subgoal_is_rejected_once() -> None:
    planner = PlannerPolicy(vanilla_rules())
    again = {
        "thought": "",
        "subgoal": "crafting_table",
        "skill": "place",
        "args": {"block": "crafting_table"},
    }

    def policy(messages: Sequence[Message], meta: CallMeta | None) -> str:
        assert meta is not None
        if meta.purpose == "act" and meta.extra["obs"].step < 2:
            return json.dumps(again)
        return planner(messages, meta)

    _record, steps, client, _agent = episode(
        XenonAgent, "vanilla", "diamond", policy=policy, budget=3
    )
    purposes = [meta.purpose for _m, meta in client.calls]
    assert purposes[:4] == ["init_graph", "act", "act", "act_rejected"]
    rejected = line(client.calls[3][0][1].content, "REJECTED_PROPOSAL")
    assert "invalid for subgoal crafting_table" in rejected["problem"]
    assert steps[1].action != {"skill": "place", "args": {"block": "crafting_table"}}


def test_graph_prior_is_capped_acyclic_and_evicts_deterministically() -> None:
    nodes = [
        {"item": "story/goal", "requirements": [{"item": "a", "count": 1}]},
        {"item": "a", "requirements": [{"item": "b"}]},
        {"item": "b", "requirements": [{"item": "a"}, {"item": "b"}]},  # a cycle and a self-loop
        *({"item": f"n{i}", "requirements": []} for i in range(40)),
    ]
    graph, problem = DependencyGraph.from_prior(
        "minecraft:story/goal", {"root": "story/goal", "nodes": nodes}
    )
    assert not problem and len(graph.nodes) == GRAPH_CAPACITY
    assert ("b", "a") in graph.rejected_edges and ("b", "b") in graph.rejected_edges
    assert graph.nodes["b"].requirements == [] and graph.reaches("story/goal", "b")
    graph.verify("new_item", {"skill": "mine"}, 5, None, None)
    assert len(graph.nodes) == GRAPH_CAPACITY and graph.evicted == [
        "a"
    ]  # least recently touched hypothesis
    assert "story/goal" in graph.nodes  # the root is never evicted
    have: set[str] = set()
    frontier, revision = graph.frontier(lambda item, n: item in have, 6)
    assert frontier == ["a"] and not revision  # a dangling requirement is a leaf to obtain
    graph.needs_revision("a", 7)
    assert graph.frontier(lambda item, n: item in have, 7) == ([], ["a"])
    empty, problem = DependencyGraph.from_prior("story/goal", {"nodes": "oops"})
    assert problem and list(empty.nodes) == ["story/goal"]


def test_memory_capacity_eviction_and_retrieval() -> None:
    memory = ActionMemory()
    for i in range(MEMORY_CAPACITY + 5):
        entry = MemoryEntry(
            f"item{i % 7}",
            {"skill": "mine", "args": {"block": f"b{i}"}},
            "failed" if i % 2 else "success",
            "",
            {f"item{i % 7}": 1},
            {},
            i,
            "[]",
        )
        memory.record(f"k{i}", entry)
        if i == 1:
            assert memory.retrieve({"item1"}) == [entry]  # retrieved once: protected from eviction
    assert len(memory) == MEMORY_CAPACITY
    assert ("item1", "k1") in memory.entries and ("item0", "k0") not in memory.entries
    got = memory.retrieve({"item3"})
    assert len(got) == RETRIEVE_LIMIT and all(e.subgoal == "item3" for e in got)
    assert got[0].outcome == "failed"  # a failure for the same subgoal ranks first
    assert memory.invalid("item3", "k17", "[]") is not None
    assert memory.invalid("item3", "k17", '[["x",1]]') is None  # the inventory changed since
    assert memory.invalid("item3", "k24", "[]") is None  # it worked


def test_hidden_and_disclosed_conditions() -> None:
    _r, _s, hidden, _ = episode(XenonAgent, "M05", "diamond", budget=20)
    for messages, _meta in hidden.calls:
        text = messages[0].content + messages[1].content
        assert SHEET not in text and not any(p in text for p in HIDDEN_PHRASES)
    _r2, _s2, disclosed, agent = episode(XenonAgent, "M05", "diamond", sheet=SHEET, budget=20)
    for messages, meta in disclosed.calls:
        assert SHEET in messages[0].content, meta.purpose
    _a, _b, van, _ = episode(XenonAgent, "vanilla", "diamond", budget=2)
    _c, _d, mir, _ = episode(XenonAgent, "M05", "diamond", budget=2)
    assert [m[0].content + m[1].content for m, _ in van.calls] == [
        m[0].content + m[1].content for m, _ in mir.calls
    ]
    agent.start(EpisodeContext("diamond", "Diamond", 50, 3))
    assert (
        agent.graph is None
        and not len(agent.memory)
        and not agent.replans
        and not agent.contradictions
    )


def test_a_quoted_requirement_count_in_the_graph_prior_is_read() -> None:
    """An initializer reply giving a requirement's count quoted ("count": "8") had it read as
    1, so the frontier treated one iron ingot as enough for a chestplate."""
    prior = {
        "root": "story/obtain_armor",
        "nodes": [
            {"item": "story/obtain_armor", "requirements": [{"item": "iron_chestplate"}]},
            {
                "item": "iron_chestplate",
                "requirements": [{"item": "iron_ingot", "count": "8"}],
                "action_hint": "craft it",
            },
        ],
    }
    graph, problem = DependencyGraph.from_prior("story/obtain_armor", prior)
    assert not problem
    assert [(r.item, r.count) for r in graph.nodes["iron_chestplate"].requirements] == [
        ("iron_ingot", 8)
    ]
