"""Reply writers of the LLM configurations (Reflexion, Voyager, XENON, ADAM) for the mock policy.

The policy itself (``PlannerPolicy``, the writer registry and the shared helpers)
is in ``agents/mock_policy.py``; a plain action reply is its default writer. The
writers here wrap the planner's chosen action in the JSON each call expects.
``agents/mock_planner.py`` imports every writer module, MineEvolve's and the
baselines' included.
"""

from __future__ import annotations

import json
from typing import Any

from mirrorcraft.agents.mock_policy import (
    PlannerPolicy,
    contract,
    intended_item,
    subgoal_label,
    success_for,
)
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta, ChatReply, ToolCall

__all__ = ["PlannerPolicy"]


@contract("reflection")
def _reflection(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    evidence = meta.extra.get("evidence", {})
    return json.dumps(
        {
            "failure_type": str(evidence.get("trigger", "strategy")),
            "diagnosis": "the last actions did not move the task forward",
            "next_subgoal": subgoal_label(action),
            "avoid": ["repeating an action that just failed"],
            "try": [json.dumps(action)],
            "expiry_condition": "the next milestone is reached",
        }
    )


@contract("tool_action")
def _tool_action(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> ChatReply:
    """The ``tools`` configuration: the planner's action as one function call."""
    arguments = json.dumps(action.get("args", {}), sort_keys=True)
    return ChatReply("following the plan", (ToolCall(str(action["skill"]), arguments, "call_0"),))


# -- Voyager, XENON and ADAM ---------------------------------------------------------------------


@contract("voyager_program")
def _voyager_program(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    for card in meta.extra.get("retrieved", []):
        if card.get("actions") == [action]:
            return json.dumps(
                {
                    "explain": "a verified program fits",
                    "plan": "reuse it",
                    "reuse_skill": card["name"],
                }
            )
    intended = intended_item(policy, action)
    name = (
        "_".join(str(x) for x in (action.get("skill"), intended) if x)
        .replace(":", "_")
        .replace("/", "_")
    )
    program = {
        "name": name,
        "description": f"{action.get('skill')} towards {intended}",
        "subgoal": intended,
        "success": success_for(action, intended),
        "actions": [action],
    }
    return json.dumps(
        {"explain": "following the plan", "plan": f"get {intended}", "program": program}
    )


@contract("voyager_critic")
def _voyager_critic(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    passed = bool(meta.extra.get("check", {}).get("passed"))
    return json.dumps(
        {
            "reasoning": "compared the states",
            "success": passed,
            "critique": "" if passed else "the declared subgoal was not observed",
        }
    )


@contract("xenon_action")
@contract("adam_action")
def _subgoal_action(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    return json.dumps(
        {"thought": "following the plan", "subgoal": intended_item(policy, action), **action}
    )


@contract("xenon_graph")
def _xenon_graph(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    """A dependency graph from the planner's vanilla beliefs, breadth first from the goal items."""
    belief = policy.agent.belief
    limit = int(meta.extra.get("max_nodes", 32))
    root = str(meta.extra.get("root", obs.progress.milestones[-1].advancement))
    tiers = ("wooden_", "stone_", "iron_", "golden_", "diamond_", "netherite_")
    goal_items = list(policy.agent.goal[1]) or ["crafting_table"]
    nodes = [
        {
            "item": root,
            "requirements": [{"item": goal_items[0], "count": 1}],
            "action_hint": "the final goal",
        }
    ]
    queue, seen = list(goal_items[:1]), {root, goal_items[0]}
    while queue and len(nodes) < limit:
        item = queue.pop(0)
        options = belief.produced_by.get(item, [])
        smelts = sorted(
            (o for o in options if hasattr(o, "input")),
            key=lambda o: (not o.input.startswith("raw_"), o.input),
        )
        crafts = sorted(
            (o for o in options if hasattr(o, "rows")), key=lambda c: (len(c.inputs), c.key)
        )
        blocks = [
            o
            for o in options
            if getattr(o, "kind", "") == "block" and dict(o.drops).get(item, 0) >= 0.5
        ]
        reqs: list[dict[str, Any]] = []
        hint = "explore for it"
        if blocks:
            src = max(blocks, key=lambda b: (dict(b.drops).get(item, 0), b.source))
            harvest = belief.harvest.get(src.source, frozenset())
            tools = sorted(
                harvest - {"hand"},
                key=lambda t: (next((i for i, p in enumerate(tiers) if t.startswith(p)), 9), t),
            )
            reqs = [{"item": tools[0], "count": 1}] if tools and "hand" not in harvest else []
            hint = f"mine {src.source}"
        elif smelts:
            reqs = [{"item": smelts[0].input, "count": 1}, {"item": smelts[0].station, "count": 1}]
            hint = f"smelt {smelts[0].input}"
        elif crafts:
            c = crafts[0]
            reqs = [
                {
                    "item": min(cell, key=lambda i: (not i.startswith(("cobblestone", "oak_")), i)),
                    "count": n,
                }
                for cell, n in sorted(c.inputs.items(), key=lambda x: sorted(x[0]))
            ]
            if c.station == "crafting_table":
                reqs.append({"item": "crafting_table", "count": 1})
            hint = "craft it"
        nodes.append({"item": item, "requirements": reqs, "action_hint": hint})
        for r in reqs:
            if r["item"] not in seen:
                seen.add(r["item"])
                queue.append(r["item"])
    return json.dumps({"root": root, "nodes": nodes[:limit]})


@contract("adam_plan")
def _adam_plan(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    first = intended_item(policy, action)
    rest = [m.advancement for m in obs.progress.milestones if not m.done]
    targets = list(dict.fromkeys([first, *rest]))[:8]
    return json.dumps(
        {"subgoals": [{"target": t, "reason": "next step of the plan"} for t in targets]}
    )


@contract("adam_discovery")
def _adam_discovery(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    """Edges read straight off the samples: what every sample consumed causes what every sample added."""
    edges = []
    for group in meta.extra.get("groups", []):
        samples = [s for s in group.get("samples", []) if s.get("addedItems")]
        if not samples:
            continue
        added = set.intersection(*(set(s["addedItems"]) for s in samples))
        if not added:
            continue
        fuel = samples[0].get("fuelUsed", {})
        causes = [
            {"type": "item", "name": k, "count": max(int(v) - int(fuel.get(k, 0)), 0)}
            for k, v in sorted(samples[0].get("consumedItems", {}).items())
            if int(v) > int(fuel.get(k, 0))
        ]
        if group.get("station"):
            causes.append({"type": "station", "name": group["station"], "count": 1})
        edges.append(
            {
                "sample_key": group["sample_key"],
                "causes": causes,
                "effects": [{"type": "item", "name": n} for n in sorted(added)],
            }
        )
    return json.dumps({"edges": edges})
