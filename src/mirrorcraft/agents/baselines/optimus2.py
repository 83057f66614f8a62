"""Optimus-2 reduced to our body: goals from a planner, actions from a goal-conditioned head.

Optimus-2 pairs a multimodal planner with a goal-observation-action conditioned
policy (GOAP) whose behaviour encoder summarises the recent observation-action
history. Its policy is a trained network acting on pixels and key presses; we
keep its structure and replace the network with the model:

- **Planner**: one call (``plan``) writes short goals, each with checks that show
  it is reached (the same check vocabulary as every other configuration);
  called at the start, when every goal is reached, and when a goal is not reached
  within ``optimus2.max_actions_per_subgoal`` actions.
- **Action head**: one call per action (``act``) conditioned on the current goal,
  the last ``optimus2.history_length`` (observation, action, result) triples (the
  behaviour history, as text) and the current observation.

It does not use the shared subgoal executor: like the paper's Optimus-2 it brings
its own low-level policy, so under an equal call budget it spends one call per
action. It keeps no memory across episodes.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mirrorcraft.agents.baselines.config import baseline_settings, shared_limits
from mirrorcraft.agents.baselines.executor import BaselineStats
from mirrorcraft.agents.llm.base import LLMAgent
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.agents.mineevolve.checks import Check, parse_checks, satisfied
from mirrorcraft.agents.mineevolve.prompting import compact, task_text
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta
from mirrorcraft.rules.ruleset import RuleSet

MAX_PLANS_PER_STEP = 3


@dataclass(frozen=True)
class Goal:
    text: str
    checks: tuple[Check, ...]

    def to_json(self) -> dict[str, Any]:
        return {"goal": self.text, "checks": [c.to_json() for c in self.checks]}


def parse_goals(doc: dict[str, Any] | None, limit: int) -> tuple[list[Goal] | None, str]:
    if doc is None:
        return None, "no JSON object found"
    raw = doc.get("goals")
    if not isinstance(raw, list) or not raw:
        return None, "goals must be a non-empty list"
    if len(raw) > limit:
        return None, f"at most {limit} goals"
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("goal"), str):
            return None, f"goal {i + 1} needs a 'goal' text"
        checks, problem = parse_checks(item.get("checks"))
        if problem:
            return None, f"goal {i + 1}: {problem}"
        out.append(Goal(item["goal"].strip()[:160] or "goal", checks))
    return out, ""


class Optimus2Agent(LLMAgent):
    method = "optimus2"
    template_names = ("common", "baselines", "optimus2")

    def __init__(
        self,
        name: str,
        client: Any,
        vanilla: RuleSet,
        *,
        options: dict[str, Any] | None = None,
        **kwargs: Any,
    ):
        super().__init__(name, client, vanilla, **kwargs)
        opts = dict(options or {})
        overrides = opts.pop("settings", None) or {}
        opts.pop("memory", None)
        if opts:
            raise ValueError(f"unknown optimus2 options: {sorted(opts)}")
        self.limits = shared_limits(overrides)
        self.settings: Any = baseline_settings(self.method, overrides)
        self.prompts = load_template(self.method)
        self.stats = BaselineStats()

    def memory_stats(self) -> dict[str, Any]:
        return self.stats.to_json()

    def reset(self) -> None:
        self.goals: list[Goal] = []
        self.index = 0
        self.reached: list[Goal] = []
        self.goal_start: Observation | None = None
        self.spent = 0
        self.note = self.prompts.render("plan_note_first", {})
        self.behaviour: deque[str] = deque(maxlen=max(self.settings.history_length, 1))
        self._last: tuple[Observation, dict[str, Any]] | None = None
        self.stats = BaselineStats()

    @property
    def goal(self) -> Goal | None:
        return self.goals[self.index] if self.index < len(self.goals) else None

    def _remember(self, obs: Observation) -> None:
        if self._last is None or obs.last_result is None:
            return
        before, action = self._last
        r = obs.last_result
        result = "ok" if r.ok else f"failed ({r.reason})"
        if r.produced:
            result += f", produced {compact(dict(r.produced))}"
        if self.settings.history_length:
            self.behaviour.append(
                self.prompts.render(
                    "behaviour",
                    {
                        "STEP": str(obs.step),
                        "INVENTORY": compact(before.inventory),
                        "NEAR": compact(sorted({n.id for n in before.nearby_blocks})[:8]),
                        "ACTION": compact(action),
                        "RESULT": result,
                    },
                )
            )
        self._last = None

    def _reached(self, obs: Observation) -> bool:
        goal = self.goal
        assert goal is not None
        last_ok = obs.last_result.ok if obs.last_result is not None and self.spent else None
        return satisfied(goal.checks, obs, last_ok, self.goal_start or obs)

    async def decide(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        self._remember(obs)
        plans = 0
        while True:
            goal = self.goal
            if goal is not None and self._reached(obs):
                self.reached.append(goal)
                self.index += 1
                self.goal_start, self.spent = obs, 0
                continue
            if goal is not None and self.spent >= self.settings.max_actions_per_subgoal:
                self.note = self.prompts.render(
                    "plan_note_stuck", {"GOAL": goal.text, "ACTIONS": str(self.spent)}
                )
                self.stats.replans += 1
                goal = None
            if goal is None:
                if plans >= MAX_PLANS_PER_STEP:
                    return None
                plans += 1
                if not await self.plan(obs):
                    return None
                continue
            break
        got = await self.act_for(goal, obs)
        if got is None:
            return None
        action, thought = got
        self.spent += 1
        self._last = (obs, action)
        return action, thought

    async def plan(self, obs: Observation) -> bool:
        t = self.prompts
        system = self.disclose(
            t.render(
                "plan_system",
                {
                    "MAX_GOALS": str(self.limits.executor.max_plan_subgoals),
                    "AGENT_RULES": self.system_common()["AGENT_RULES"],
                },
            )
        )
        user = t.render(
            "plan_user",
            {
                "TASK": task_text(obs),
                "DONE": "; ".join(g.text for g in self.reached[-8:]) or "none",
                "NOTE": self.note,
                "OBSERVATION": self.observation_text(obs),
            },
        )
        meta = CallMeta("plan", "optimus2_plan", self.fields(obs), {"obs": obs})
        self.stats.call("plan")
        reply = await self.call(system, user, meta)
        goals, problem = parse_goals(reply.doc, self.limits.executor.max_plan_subgoals)
        if goals is None:
            self.unusable()
            self.stats.json_repairs += 1
            again = load_template("baselines").render(
                "json_repair", {"ORIGINAL_USER": user, "PROBLEM": problem}
            )
            self.stats.call("plan")
            reply = await self.call(system, again, meta)
            goals, _problem = parse_goals(reply.doc, self.limits.executor.max_plan_subgoals)
            if goals is None:
                self.unusable()
        if goals is None:
            return False
        self.goals, self.index = goals, 0
        self.goal_start, self.spent = obs, 0
        self.note = self.prompts.render("plan_note_done", {})
        self.stats.plans += 1
        return True

    async def act_for(self, goal: Goal, obs: Observation) -> tuple[dict[str, Any], str] | None:
        t = self.prompts
        system = self.disclose(t.render("act_system", self.system_common()))
        user = t.render(
            "act_user",
            {
                "GOAL": goal.text,
                "CHECKS": json.dumps([c.to_json() for c in goal.checks]),
                "SPENT": str(self.spent),
                "HISTORY": "\n".join(self.behaviour) or "(nothing yet)",
                "OBSERVATION": self.observation_text(obs),
            },
        )
        self.stats.call("act")
        got = await self.ask_action(
            system, user, obs, contract="optimus2_act", extra={"goal": goal.to_json()}
        )
        if got is None:
            return None
        action, reply = got
        return action, str((reply.doc or {}).get("thought", ""))[:300]


__all__: Sequence[str] = ["Goal", "Optimus2Agent", "parse_goals"]
