"""The scripted planner policy behind the offline mock model, and its reply-writer registry.

Tests and smoke runs drive every LLM configuration without a model: the policy
reads the observation a configuration attached to the call (``meta.extra["obs"]``),
asks the adaptive planner for the next action, and hands it to the writer
registered for the call's reply contract. Writers live beside the configurations
they serve (``agents/llm/scripted.py``, ``agents/mineevolve/mock_replies.py``,
``agents/baselines/mock_replies.py``); ``agents/mock_planner.py`` imports them all.
This module sits below every one of them, so none imports another.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from mirrorcraft.agents.base import EpisodeContext
from mirrorcraft.agents.reference import AdaptivePlannerAgent
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta, ChatReply, Message
from mirrorcraft.rules.ruleset import RuleSet

Policy = Callable[[Sequence[Message], CallMeta | None], str | ChatReply]
ContractWriter = Callable[["PlannerPolicy", Observation, dict[str, Any], CallMeta], str | ChatReply]
"""A reply writer: the reply text, or a ``ChatReply`` with tool calls (the ``tools``
configuration's contract)."""

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

    def __call__(self, messages: Sequence[Message], meta: CallMeta | None) -> str | ChatReply:
        self.calls.append(meta or CallMeta("unknown"))
        self.prompts.append(messages)
        if meta is None or not isinstance(meta.extra.get("obs"), Observation):
            return "{}"
        obs: Observation = meta.extra["obs"]
        self.catch_up(meta.extra.get("observed", ()))
        action = self.next_action(obs) or {"skill": "wait", "args": {}}
        writer = WRITERS.get(meta.contract, action_reply)
        return writer(self, obs, action, meta)


def action_reply(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    return json.dumps({"thought": "following the plan", "subgoal": subgoal_label(action), **action})


def subgoal_label(action: dict[str, Any]) -> str:
    args = action.get("args", {})
    return str(
        args.get("block")
        or args.get("target")
        or args.get("input")
        or args.get("item")
        or action.get("skill")
    )


def intended_item(policy: PlannerPolicy, action: dict[str, Any]) -> str:
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
    return subgoal_label(action)


def success_for(action: dict[str, Any], intended: str) -> dict[str, Any]:
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


ITEM_SKILLS = ("mine", "attack", "collect", "craft_grid", "smelt")


def subgoal_for(policy: PlannerPolicy, obs: Observation, action: dict[str, Any]) -> dict[str, Any]:
    """The planner's action as a checked subgoal (the plan format MineEvolve and the baselines share)."""
    skill, args = action.get("skill"), action.get("args", {})
    check: dict[str, Any] = {"type": "action_ok"}
    intended = intended_item(policy, action)
    if skill in ITEM_SKILLS and intended in policy.vanilla.game.items:
        check = {"type": "inv_gain", "item": intended, "n": 1}
    elif skill == "place" and not any(f.id == args.get("block") for f in obs.facilities):
        check = {"type": "facility", "block": str(args.get("block"))}
    elif skill == "explore":
        check = {"type": "visible", "target": str(args.get("target"))}
    elif skill == "equip":
        check = {"type": "equipped", "item": str(args.get("item"))}
    return {
        "subgoal_id": "sg_001",
        "condition": f"{skill} {intended}",
        "action": action,
        "checks": [check],
        "max_actions": 3,
        "rationale": "the next prerequisite",
    }
