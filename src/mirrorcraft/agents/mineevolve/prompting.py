"""Text blocks of MineEvolve prompts: task, plan, prefix, feedback and retrieved knowledge."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from mirrorcraft.agents.mineevolve.entries import TRIGGER_FIELDS, KnowledgeEntry
from mirrorcraft.agents.mineevolve.feedback import Feedback
from mirrorcraft.agents.mineevolve.plan import Plan, Subgoal
from mirrorcraft.body.observation import Observation


def compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def task_text(obs: Observation) -> str:
    p = obs.progress
    final = p.milestones[-1] if p.milestones else None
    text = p.title
    if final is not None:
        text += f" (success: {final.title} - {final.description}; advancement {final.advancement})"
    nxt = next((m for m in p.milestones if not m.done), None)
    if nxt is not None and nxt is not final:
        text += f"; next unfinished milestone: {nxt.title} ({nxt.advancement})"
    return text


def subgoal_line(sg: Subgoal, status: str = "") -> str:
    tag = f" [{status}]" if status else ""
    return f"- {sg.id}: {sg.condition}{tag} {compact(sg.to_json())}"


def prefix_text(plan: Plan | None, limit: int = 8, *, stale: bool = False) -> str:
    if plan is None or not plan.prefix:
        return "none"
    text = "\n".join(subgoal_line(sg) for sg in plan.prefix[-limit:])
    if stale:
        text += (
            "\nNOTE: every subgoal of the last plan already held when it was made; "
            "plan something whose checks are not yet met."
        )
    return text


def plan_text(plan: Plan, failing: Subgoal | None) -> str:
    lines = []
    for i, sg in enumerate(plan.subgoals):
        if i < plan.done:
            status = "done"
        elif failing is not None and sg.id == failing.id:
            status = "failed"
        else:
            status = "unfinished"
        lines.append(subgoal_line(sg, status))
    return "\n".join(lines)


def feedback_text(items: Sequence[Feedback], mode: str) -> str:
    if not items:
        return "none"
    return "\n".join(f"- {compact(fb.view(mode))}" for fb in items)


def knowledge_text(entries: Iterable[KnowledgeEntry], prior_weight: float) -> str:
    text = "\n".join(e.render(prior_weight) for e in entries)
    return text or "none"


def split_kinds(
    entries: Iterable[KnowledgeEntry],
) -> tuple[list[KnowledgeEntry], list[KnowledgeEntry]]:
    """(skills, remedies and notes): notes of the reflection ablation sit with the remedies."""
    skills: list[KnowledgeEntry] = []
    others: list[KnowledgeEntry] = []
    for e in entries:
        (skills if e.kind == "skill" else others).append(e)
    return skills, others


def trigger_fields() -> str:
    return ", ".join(TRIGGER_FIELDS)
