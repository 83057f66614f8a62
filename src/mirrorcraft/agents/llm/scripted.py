"""Scripted reply policies for the mock client: a planner that answers any reply contract.

Tests drive every LLM configuration end to end without a model: the policy reads
the observation the configuration attached to the call (``meta.extra["obs"]``),
asks the adaptive planner for the next action, and writes it in the reply format
the call expects. Faults (malformed replies, timeouts, 429s) are injected by the
mock client, not here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from mirrorcraft.agents.base import EpisodeContext
from mirrorcraft.agents.reference import AdaptivePlannerAgent
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta, Message
from mirrorcraft.rules.ruleset import RuleSet

Policy = Callable[[Sequence[Message], CallMeta | None], str]
ContractWriter = Callable[["PlannerPolicy", Observation, dict[str, Any], CallMeta], str]

WRITERS: dict[str, ContractWriter] = {}
"""Reply writers by contract; configurations register their own contracts here."""


def contract(name: str) -> Callable[[ContractWriter], ContractWriter]:
    def register(fn: ContractWriter) -> ContractWriter:
        WRITERS[name] = fn
        return fn

    return register


class PlannerPolicy:
    """Plays a configuration with the adaptive planner's decisions."""

    def __init__(self, vanilla: RuleSet):
        self.vanilla = vanilla
        self.agent = AdaptivePlannerAgent(vanilla)
        self.task: str | None = None
        self.last_step = -1
        self.current: dict[str, Any] | None = None
        self.calls: list[CallMeta] = []
        self.prompts: list[Sequence[Message]] = []

    def next_action(self, obs: Observation) -> dict[str, Any] | None:
        """The planner's action for this observation (computed once per step)."""
        if obs.progress.task != self.task or obs.step < self.last_step:
            self.task = obs.progress.task
            self.agent.start(
                EpisodeContext(obs.progress.task, obs.progress.title, obs.budget.total, 0)
            )
            self.last_step = -1
        if obs.step != self.last_step:
            a = self.agent
            a.memory.step = obs.step
            a._learn(obs)
            step = a.next_step(obs)
            a.pending = step
            a.last_inv = dict(obs.inventory)
            self.current = None if step is None else dict(step.action)
            self.last_step = obs.step
        return self.current

    def catch_up(self, observed: Sequence[tuple[dict[str, Any], Observation]]) -> None:
        """Learn from results the configuration saw without calling the model.

        ``observed`` holds (action sent, observation after it) pairs in order. A
        result is credited to the planner's pending step only when the action sent
        was that step's action; otherwise there is nothing to attribute it to.
        """
        a = self.agent
        for action, obs in observed:
            if self.task != obs.progress.task or obs.step <= self.last_step:
                continue
            if a.pending is not None and a.pending.action != action:
                a.pending = None
            a.memory.step = obs.step
            a._learn(obs)
            a.last_inv = dict(obs.inventory)
            self.last_step = obs.step
            self.current = None

    def __call__(self, messages: Sequence[Message], meta: CallMeta | None) -> str:
        self.calls.append(meta or CallMeta("unknown"))
        self.prompts.append(messages)
        if meta is None or not isinstance(meta.extra.get("obs"), Observation):
            return "{}"
        obs: Observation = meta.extra["obs"]
        self.catch_up(meta.extra.get("observed", ()))
        action = self.next_action(obs) or {"skill": "wait", "args": {}}
        writer = WRITERS.get(meta.contract, _action_reply)
        return writer(self, obs, action, meta)


def _action_reply(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    return json.dumps({"thought": "following the plan", "subgoal": _subgoal(action), **action})


def _subgoal(action: dict[str, Any]) -> str:
    args = action.get("args", {})
    return str(
        args.get("block")
        or args.get("target")
        or args.get("input")
        or args.get("item")
        or action.get("skill")
    )


@contract("reflection")
def _reflection(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    evidence = meta.extra.get("evidence", {})
    return json.dumps(
        {
            "failure_type": str(evidence.get("trigger", "strategy")),
            "diagnosis": "the last actions did not move the task forward",
            "next_subgoal": _subgoal(action),
            "avoid": ["repeating an action that just failed"],
            "try": [json.dumps(action)],
            "expiry_condition": "the next milestone is reached",
        }
    )


# -- Voyager, XENON and ADAM ---------------------------------------------------------------------


def _intended(policy: PlannerPolicy, action: dict[str, Any]) -> str:
    """The item the planner expects this action to give (its own, revisable beliefs), else a target id."""
    belief = policy.agent.belief
    step = policy.agent.pending
    args = action.get("args", {})
    if step is not None and step.action == action and step.expects:
        kind, key = step.expects
        if kind == "craft":
            option = next((c for c in belief.crafts if c.key == key), None)
            if option is not None and option.outputs:
                return option.outputs[0][0]
        elif kind == "smelt":
            smelt = belief.smelts.get(tuple(key))
            if smelt is not None and smelt.outputs:
                return smelt.outputs[0][0]
    if action.get("skill") == "craft_grid":
        try:
            cells = tuple(tuple(c for c in row) for row in args.get("grid", ()))
            outcome = policy.vanilla.craft(cells, str(args.get("station", "inventory")))
        except (TypeError, KeyError, ValueError):
            outcome = None
        if outcome is not None:
            return str(outcome.item)
    source = None
    if action.get("skill") == "mine":
        source = belief.blocks.get(str(args.get("block")))
    elif action.get("skill") == "attack":
        source = belief.mobs.get(str(args.get("target")))
    if source is not None and source.drops:
        return max(source.drops, key=lambda d: (d[1], d[0]))[0]
    return _subgoal(action)


def _success_for(action: dict[str, Any], intended: str) -> dict[str, Any]:
    skill, args = action.get("skill"), action.get("args", {})
    if skill == "craft_grid":
        return {"kind": "inventory_delta", "item": intended, "count": 1}
    if skill == "explore":
        return {"kind": "target_visible", "target": str(args.get("target"))}
    if skill == "place":
        return {"kind": "facility_available", "facility": str(args.get("block"))}
    if skill == "prepare_access":
        return {"kind": "action_result"}
    return {"kind": "state_change"}


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
    intended = _intended(policy, action)
    name = (
        "_".join(str(x) for x in (action.get("skill"), intended) if x)
        .replace(":", "_")
        .replace("/", "_")
    )
    program = {
        "name": name,
        "description": f"{action.get('skill')} towards {intended}",
        "subgoal": intended,
        "success": _success_for(action, intended),
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
        {"thought": "following the plan", "subgoal": _intended(policy, action), **action}
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
    first = _intended(policy, action)
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


# MineEvolve registers its own reply contracts (imported last: it uses the helpers above).
from mirrorcraft.agents.mineevolve import mock_replies as _mineevolve_replies  # noqa: E402,F401
