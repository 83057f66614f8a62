"""DEPS (describe, explain, plan, select) on the semantic-skill body.

- **Plan**: the model writes a plan of checked subgoals for the shared executor.
  A subgoal may say which earlier subgoals it ``needs``; without the field it
  needs the one before it (plan order), with ``needs: []`` it can run at any time.
- **Select**: among the unfinished subgoals whose needs are done, the selector
  runs the one estimated nearest: in-place skills (crafting, smelting, placing,
  equipping, enchanting, waiting) count as distance 0, a target listed nearby by
  its nearest distance, an unseen target after every seen one; ties keep plan
  order. DEPS learns this horizon estimate; ours reads the observation.
- **Describe**: when a subgoal fails, a description is built from the monitor's
  typed feedback (failure type and reasons, inventory change, progress), with no
  model call; when a plan finishes without reaching the goal, that is described.
- **Explain**: one model call (``explain``) turns the description and the plan
  into an explanation of the failure.
- **Plan again**: one call (``plan``) writes a whole new plan from the current
  state, given the previous plan, the description and the explanation.

Every failed subgoal is explained and replanned (up to ``deps.max_revisions`` per
episode; later failures get a new plan without an explanation). DEPS keeps no
memory across episodes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mirrorcraft.agents.baselines.executor import SubgoalAgent
from mirrorcraft.agents.mineevolve.feedback import Feedback
from mirrorcraft.agents.mineevolve.plan import ID_LENGTH, Plan, Subgoal
from mirrorcraft.agents.mineevolve.prompting import compact, plan_text, subgoal_line, task_text
from mirrorcraft.body.observation import Observation

IN_PLACE = frozenset({"craft_grid", "smelt", "place", "equip", "enchant", "wait", "ascend"})
UNSEEN = 1_000.0


def proximity(sg: Subgoal, obs: Observation) -> float:
    """The selector's estimate of how soon a subgoal can be reached (smaller is sooner)."""
    if sg.skill in IN_PLACE:
        return 0.0
    args = sg.action.get("args", {})
    target = str(args.get("block") or args.get("target") or args.get("item") or "")
    seen = [
        n.distance
        for n in (*obs.nearby_blocks, *obs.nearby_entities, *obs.nearby_drops, *obs.facilities)
        if n.id == target or (target == "log" and n.id.endswith("_log"))
    ]
    return min(seen) if seen else UNSEEN


def needs_of(raw: Any, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Each subgoal's prerequisites: its own ``needs`` list, else the subgoal before it."""
    out: dict[str, tuple[str, ...]] = {}
    items = raw if isinstance(raw, list) else []
    for i, sid in enumerate(ids):
        doc = items[i] if i < len(items) and isinstance(items[i], dict) else {}
        needs = doc.get("needs")
        if isinstance(needs, list) and all(isinstance(n, str) for n in needs):
            # a need names an id as the model wrote it; the subgoal kept its first ID_LENGTH
            out[sid] = tuple(n[:ID_LENGTH] for n in needs if n[:ID_LENGTH] in ids[:i])
        else:
            out[sid] = (ids[i - 1],) if i else ()
    return out


class DepsAgent(SubgoalAgent):
    method = "deps"
    template_names = ("common", "baselines", "deps")

    def begin_episode(self) -> None:
        self.needs: dict[str, tuple[str, ...]] = {}
        self.revision: dict[str, str] | None = None
        self.revisions = 0

    # -- plan and select ----------------------------------------------------------------------
    async def make_plan(self, obs: Observation, *, stale: bool = False) -> Plan | None:
        if self.revision is None and self.plan is not None and self.plan.current is None:
            # The plan ran out without reaching the goal: describe that and plan again.
            self.revision = {
                "PLAN": plan_text(self.plan, None),
                "DESCRIPTION": self.prompts.render(
                    "describe_finished", {"INVENTORY": compact(obs.inventory)}
                ),
                "EXPLANATION": "none (no subgoal failed)",
            }
        revision = (
            self.prompts.render("revision", self.revision)
            if self.revision
            else self.prompts.render("first_plan", {})
        )
        user = self.prompts.render(
            "plan_user",
            {
                "TASK": task_text(obs),
                "DONE": "\n".join(subgoal_line(sg) for sg in self.completed[-8:]) or "none",
                "REVISION": revision,
                "OBSERVATION": self.observation_text(obs),
            },
        )
        system = self.disclose(self.prompts.render("plan_system", self.system_parts()))
        raw: list[Any] = []

        def parse(doc: dict[str, Any] | None) -> tuple[tuple[Subgoal, ...] | None, str]:
            value, problem = self.parse_plan()(doc)
            if value is not None and doc is not None:
                raw[:] = list(doc.get("subgoals") or [])
            return value, problem

        extra = {"revision": dict(self.revision or {})}
        subgoals = await self.ask_json(system, user, "plan", obs, extra, parse)
        self.revision = None
        if subgoals is None:
            return None
        ids = [sg.id for sg in subgoals]
        if len(set(ids)) != len(ids):
            subgoals = tuple(
                Subgoal(f"sg_{i + 1:03d}", s.condition, s.action, s.checks, s.max_actions, s.source)
                for i, s in enumerate(subgoals)
            )
            ids = [sg.id for sg in subgoals]
        self.needs = needs_of(raw, ids)
        return self.new_plan(subgoals)

    def ready(self, plan: Plan) -> list[Subgoal]:
        done = {sg.id for sg in plan.prefix}
        return [sg for sg in plan.suffix if all(n in done for n in self.needs.get(sg.id, ()))]

    def choose_next(self, plan: Plan, obs: Observation) -> None:
        ready = self.ready(plan)
        if len(ready) < 2:
            return
        order = {sg.id: i for i, sg in enumerate(plan.suffix)}
        best = min(ready, key=lambda sg: (proximity(sg, obs), order[sg.id]))
        if best is plan.current:
            return
        suffix = [best, *(sg for sg in plan.suffix if sg is not best)]
        plan.subgoals[plan.done :] = suffix
        self.stats.count("selections")

    # -- describe and explain -------------------------------------------------------------------
    def describe(self, fb: Feedback, sg: Subgoal, obs: Observation) -> str:
        reasons = ", ".join(fb.reasons) or "no failed action"
        return self.prompts.render(
            "describe",
            {
                "SUBGOAL": sg.id,
                "CONDITION": sg.condition,
                "OUTCOME": f"{fb.note or 'checks unmet'} (reasons: {reasons})",
                "ACTIONS": str(fb.delta_state.get("actions", 0)),
                "FAILURE": fb.failure_type,
                "PROGRESS": f"{fb.progress:.2f}",
                "STAGNANT": ", stagnant" if fb.stagnant else "",
                "DELTA": compact(fb.delta_inv),
                "INVENTORY": compact(obs.inventory),
            },
        )

    async def on_failure(self, fb: Feedback, sg: Subgoal, obs: Observation) -> int:
        assert self.plan is not None
        description = self.describe(fb, sg, obs)
        plan = plan_text(self.plan, sg)
        explanation = "none (no explanation was asked for)"
        if self.revisions < self.settings.max_revisions:
            self.revisions += 1
            user = self.prompts.render(
                "explain_user",
                {
                    "TASK": task_text(obs),
                    "PLAN": plan,
                    "DESCRIPTION": description,
                    "OBSERVATION": self.observation_text(obs),
                },
            )
            system = self.disclose(self.prompts.render("explain_system", {}))
            extra = {"description": description, "failing": sg.to_json(), "feedback": fb.view()}

            def parse(doc: dict[str, Any] | None) -> tuple[str | None, str]:
                text = (doc or {}).get("explanation")
                if not isinstance(text, str) or not text.strip():
                    return None, "explanation must be a non-empty string"
                missing = (doc or {}).get("missing", [])
                tail = f" Missing: {json.dumps(missing)}." if missing else ""
                return text.strip()[:600] + tail, ""

            got = await self.ask_json(system, user, "explain", obs, extra, parse)
            if got is not None:
                explanation = got
                self.stats.count("explanations")
        self.revision = {"PLAN": plan, "DESCRIPTION": description, "EXPLANATION": explanation}
        self.stats.replans += 1
        self.plan = Plan(self.plan.id, self.plan.prefix, self.plan.done)
        return 0
