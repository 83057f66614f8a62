"""MineEvolve's reply contracts for the scripted mock policy (offline tests and smoke runs).

The policy's adaptive planner chooses the action; these writers wrap it in the
JSON each MineEvolve call expects. A plan reuses a retrieved skill or an active
remedy when that entry starts with the planner's action, so stored knowledge
visibly shapes later plans; skills and remedies are written from the feedback
the call carries (in the binary-feedback ablation that is only success or not).
"""

from __future__ import annotations

import json
from typing import Any

from mirrorcraft.agents.mock_policy import PlannerPolicy, contract, subgoal_for
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta


def _from_knowledge(meta: CallMeta, action: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    for entry in meta.extra.get("skills", []):
        steps = entry.get("steps", [])
        if steps and steps[0].get("action") == action:
            return [dict(s, source=f"skill:{entry['id']}") for s in steps], entry["id"]
    for entry in meta.extra.get("remedies", []):
        repair = entry.get("repair", [])
        if repair and repair[0].get("action") == action:
            return [dict(s, source=f"remedy:{entry['id']}") for s in repair], entry["id"]
    return [], ""


@contract("mineevolve_plan")
def _plan(policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta) -> str:
    subgoals, _used = _from_knowledge(meta, action)
    return json.dumps(
        {
            "plan_id": "p_mock",
            "subgoals": subgoals[:8] or [subgoal_for(policy, obs, action)],
            "global_constraints": [],
        }
    )


@contract("mineevolve_repair")
def _repair(policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta) -> str:
    subgoals, used = _from_knowledge(meta, action)
    return json.dumps(
        {
            "plan_id": "p_mock_r",
            "kept_prefix": list(meta.extra.get("prefix", [])),
            "repaired_suffix": subgoals[:8] or [subgoal_for(policy, obs, action)],
            "active_remedies_used": [used] if used.startswith("remedy") else [],
        }
    )


def _relative(subgoal: dict[str, Any], gained: dict[str, int]) -> dict[str, Any]:
    """A step whose inv_ge checks ask for what the step gained, not the absolute count then."""
    checks = []
    for c in subgoal.get("checks", []):
        if c.get("type") in ("inv_ge", "inv_gain"):
            n = max(1, int(gained.get(c.get("item"), 1)))
            c = {"type": "inv_gain", "item": c.get("item"), "n": n}
        checks.append(c)
    out = {k: v for k, v in subgoal.items() if k not in ("source", "subgoal_id")}
    return {**out, "checks": checks}


@contract("mineevolve_skill")
def _skill(policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta) -> str:
    subgoals = list(meta.extra.get("subgoals", []))
    segment = list(meta.extra.get("segment", []))
    steps = [
        _relative(sg, fb.get("delta_inv", {})) for sg, fb in zip(subgoals, segment, strict=False)
    ]
    last = steps[-1]["checks"][0] if steps else {}
    target = str(last.get("item", ""))
    goals = [f"goal:{g}" for g in meta.extra.get("goal_items", [])[:1]]
    return json.dumps(
        {
            "type": "skill",
            "id": "skill_mock",
            "trigger_context": [*goals, f"target:{target}"],
            "preconditions": [],
            "steps": steps,
            "verification": {"type": "inv_ge", "item": target, "n": 1},
            "observed_effects": {target: 1},
            "supporting_feedback": [fb.get("id") for fb in segment],
            "confidence": 0.8,
        }
    )


@contract("mineevolve_remedy")
def _remedy(policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta) -> str:
    failing = meta.extra.get("failing", {})
    window = list(meta.extra.get("window", []))
    last = window[-1] if window else {}
    failure = str(last.get("f", "OTHER"))
    target = next(
        (
            str(c.get(k))
            for c in failing.get("checks", [])
            for k in ("item", "block", "target")
            if c.get(k)
        ),
        str(failing.get("condition", "")),
    )
    skill = str(failing.get("action", {}).get("skill", ""))
    trigger = [f"target:{target}", f"skill:{skill}"]
    if "f" in last:
        trigger.append(f"failure:{failure}")
    note = str(last.get("note", "")) or "no further detail"
    return json.dumps(
        {
            "type": "remedy",
            "id": "remedy_mock",
            "trigger_context": trigger,
            "failure_type": failure,
            "risk_pattern": f"{skill} towards {target} ends with {failure}: {note}",
            "repair_action": [subgoal_for(policy, obs, action)],
            "scope": "unfinished_plan_suffix",
            "applicability": [f"working towards {target}"],
            "supporting_feedback": [fb.get("id") for fb in window],
            "confidence": 0.7,
        }
    )


@contract("mineevolve_reflection")
def _reflection(
    policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta
) -> str:
    failing = meta.extra.get("failing", {})
    return json.dumps(
        {
            "type": "reflection",
            "id": "note_mock",
            "trigger_context": [f"skill:{failing.get('action', {}).get('skill', 'wait')}"],
            "text": (
                f"'{failing.get('condition', '')}' did not work out here; the step that helped "
                f"next was {action.get('skill')} with {json.dumps(action.get('args', {}))}."
            ),
        }
    )


@contract("mineevolve_curate")
def _curate(policy: PlannerPolicy, obs: Observation, action: dict[str, Any], meta: CallMeta) -> str:
    """The mock judge accepts what the deterministic checks let through."""
    candidate = meta.extra.get("candidate", {})
    return json.dumps(
        {
            "accepted": [candidate.get("id", "")],
            "rejected": [],
            "retrieved_skills": [],
            "retrieved_remedies": [],
            "budget_used": 0,
        }
    )
