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

    def __call__(self, messages: Sequence[Message], meta: CallMeta | None) -> str:
        self.calls.append(meta or CallMeta("unknown"))
        self.prompts.append(messages)
        if meta is None or not isinstance(meta.extra.get("obs"), Observation):
            return "{}"
        obs: Observation = meta.extra["obs"]
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
