"""The baselines' reply contracts for the scripted mock policy (offline tests and smoke runs).

The adaptive planner chooses each action; these writers wrap it in the JSON each
baseline call expects. JARVIS-1's plan reuses a retrieved example plan of the same
task from the step that matches the planner's action, so its memory visibly
shapes later plans;
Optimus-1's reflector sends a failed subgoal back once when the planner would
repeat it, else asks for a new plan.
"""

from __future__ import annotations

import json
from typing import Any

from mirrorcraft.agents.mock_policy import PlannerPolicy, action_reply, contract, subgoal_for
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta


def _plan(subgoals: list[dict[str, Any]]) -> str:
    return json.dumps({"plan_id": "p_mock", "subgoals": subgoals[:8]})


@contract("deps_plan")
def _deps_plan(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    return _plan([subgoal_for(policy, obs, action)])


@contract("deps_explain")
def _deps_explain(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    feedback = meta.extra.get("feedback", {})
    failing = meta.extra.get("failing", {})
    return json.dumps(
        {
            "explanation": (
                f"'{failing.get('condition', 'the subgoal')}' ended with {feedback.get('f', 'OTHER')}; "
                f"the next step that helps is {action.get('skill')} "
                f"{json.dumps(action.get('args', {}), sort_keys=True)}"
            ),
            "missing": [],
        }
    )


@contract("jarvis1_plan")
def _jarvis1_plan(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    for example in meta.extra.get("examples", []):
        if example.get("task") != obs.progress.task:
            continue  # another task's plan would lead elsewhere
        steps = list(example.get("steps", []))
        for i, step in enumerate(steps):
            if step.get("action") == action:
                return _plan([dict(s, source=f"plan:{example['id']}") for s in steps[i:]])
    return _plan([subgoal_for(policy, obs, action)])


@contract("optimus1_plan")
def _optimus1_plan(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    return _plan([subgoal_for(policy, obs, action)])


@contract("optimus1_reflect")
def _optimus1_reflect(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    failing = meta.extra.get("failing", {})
    again = failing.get("action") == action and not meta.extra.get("continues")
    return json.dumps(
        {
            "judgement": "continue" if again else "replan",
            "reason": "the planner would repeat it" if again else "another step comes first",
        }
    )


@contract("optimus2_plan")
def _optimus2_plan(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    sg = subgoal_for(policy, obs, action)
    return json.dumps({"goals": [{"goal": sg["condition"], "checks": sg["checks"]}]})


contract("optimus2_act")(action_reply)
