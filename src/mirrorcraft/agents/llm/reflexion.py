"""Reflexion: the ReAct actor plus at most three temporary lessons.

A deterministic evaluator watches the episode and supplies fixed evidence when a
review is due: the same action failed twice in a row (repeated failure), an
action's output contradicted the vanilla hypothesis the agent was shown
(conflicting evidence), the Score did not rise for ``stall_window`` actions
(stalled progress), or every ``review_every`` actions (scheduled review). A craft is
compared with the vanilla recipe for its grid, a smelt with the vanilla cooking recipe
for its input (per unit consumed); each distinct contradiction (the same action with the
same output) is reviewed once, so a changed recipe the agent keeps using does not spend
the review allowance again and again. A
reflector call turns the evidence into a lesson. At most 6 reviews happen per
episode, at most 3 lessons are active, and each lesson expires 16 actions after
it was written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mirrorcraft.agents.llm.react import ReActAgent, step_line
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta

MAX_LESSONS = 3
MAX_REVIEWS = 6
LESSON_TTL = 16


@dataclass
class Lesson:
    created: int
    failure_type: str
    evidence: dict[str, Any]
    diagnosis: str
    next_subgoal: str
    avoid: list[str]
    try_: list[str]
    expiry: str


class ReflexionAgent(ReActAgent):
    template_names = ("common", "react", "reflexion")
    stall_window = 10
    review_every = 20

    def reset(self) -> None:
        self.lessons: list[Lesson] = []
        self.reviews = 0
        self.last_review_step = 0
        self.reviewed_at: set[int] = set()
        self.contradictions: set[str] = set()
        """The contradictions already reviewed (action and output, as JSON)."""

    # -- the deterministic evaluator ------------------------------------------------------
    def evidence(self, obs: Observation) -> dict[str, Any] | None:
        steps = self.history.steps
        if not steps or self.reviews >= MAX_REVIEWS or obs.step in self.reviewed_at:
            return None
        last = steps[-1]
        if (
            len(steps) >= 2
            and not last.result.ok
            and steps[-2].key == last.key
            and not steps[-2].result.ok
        ):
            return {
                "trigger": "repeated_failure",
                "action": last.action,
                "reason": last.result.reason,
                "message": last.result.message,
                "times": self.history.repeat_count(),
            }
        conflict = (
            self._contradiction(last.action, dict(last.result.produced), dict(last.result.consumed))
            if last.result.ok and last.result.skill in ("craft_grid", "smelt")
            else None
        )
        if conflict is not None and conflict not in self.contradictions:
            self.contradictions.add(conflict)
            return {
                "trigger": "conflicting_evidence",
                "action": last.action,
                "observed_output": dict(last.result.produced),
            }
        window = steps[-self.stall_window :]
        if (
            len(window) == self.stall_window
            and all(s.score_after <= window[0].score_before for s in window)
            and obs.step - self.last_review_step >= self.stall_window
        ):
            return {
                "trigger": "stalled_progress",
                "actions_without_progress": self.stall_window,
                "score": obs.progress.score,
            }
        if obs.step - self.last_review_step >= self.review_every:
            return {
                "trigger": "scheduled_review",
                "actions_since_last_review": obs.step - self.last_review_step,
            }
        return None

    def _contradiction(
        self, action: Any, produced: dict[str, int], consumed: dict[str, int]
    ) -> str | None:
        """What a craft or smelt showed that its vanilla recipe does not give, as a key that is
        the same each time the same input gives the same output (None: no contradiction).

        A craft is compared with the vanilla recipe for its grid; a smelt with the vanilla
        cooking recipe's output for each unit it consumed."""
        if not isinstance(action, dict) or not isinstance(action.get("args"), dict):
            return None
        args = action["args"]
        if action.get("skill") == "smelt":
            item, station = str(args.get("input")), str(args.get("station", "furnace"))
            recipe = self.vanilla.cooking(item, station)
            try:  # the input may also have been burnt as fuel: at most ``count`` were smelted
                units = min(consumed.get(item, 0), int(args.get("count", 1)))
            except (TypeError, ValueError):
                return None
            if recipe is None or units <= 0 or produced == {recipe.result: recipe.count * units}:
                return None
            per_unit = {k: v / units for k, v in sorted(produced.items())}
            return json.dumps(["smelt", item, station, per_unit])
        if action.get("skill") != "craft_grid":
            return None
        grid = args.get("grid")
        station = args.get("station")
        try:
            cells = tuple(tuple(c for c in row) for row in grid)
            expected = self.vanilla.craft(cells, str(station))
        except (TypeError, KeyError, ValueError):
            return None
        if expected is None or produced == {expected.item: expected.count}:
            return None
        return json.dumps(["craft_grid", cells, str(station), sorted(produced.items())])

    # -- the reflector --------------------------------------------------------------------
    async def reflect(self, obs: Observation, evidence: dict[str, Any]) -> None:
        self.reviews += 1
        self.reviewed_at.add(obs.step)
        self.last_review_step = obs.step
        t = load_template("reflexion")
        segment = "\n".join(step_line(s) for s in self.history.recent(4))
        system = self.disclose(t.render("reflector_system", {}))
        user = t.render(
            "reflector_user",
            {
                "GOAL": obs.progress.milestones[-1].advancement,
                "EVIDENCE": json.dumps(evidence, sort_keys=True),
                "OBSERVATION": self.observation_text(obs),
                "SEGMENT": segment or "(no actions yet)",
            },
        )
        reply = await self.call(
            system,
            user,
            CallMeta("reflect", "reflection", self.fields(obs), {"obs": obs, "evidence": evidence}),
        )
        doc = reply.doc or {}
        if not isinstance(doc.get("diagnosis"), str):
            return  # an unusable reflection is simply dropped; the call still counts
        lesson = Lesson(
            obs.step,
            str(doc.get("failure_type", evidence["trigger"]))[:60],
            evidence,
            str(doc["diagnosis"])[:400],
            str(doc.get("next_subgoal", ""))[:200],
            [str(x)[:120] for x in doc.get("avoid", [])][:4]
            if isinstance(doc.get("avoid"), list)
            else [],
            [str(x)[:120] for x in doc.get("try", [])][:4]
            if isinstance(doc.get("try"), list)
            else [],
            str(doc.get("expiry_condition", ""))[:200],
        )
        # Revise the lesson about the same trigger, else add one; never more than three.
        same = [
            i
            for i, les in enumerate(self.lessons)
            if les.evidence.get("trigger") == evidence["trigger"]
        ]
        if same:
            self.lessons[same[-1]] = lesson
        else:
            self.lessons.append(lesson)
        self.lessons = self.lessons[-MAX_LESSONS:]

    def memory_block(self) -> str:
        if not self.lessons:
            return ""
        t = load_template("reflexion")
        entries = [
            t.render(
                "memory_entry",
                {
                    "INDEX": str(i),
                    "FAILURE_TYPE": les.failure_type,
                    "EVIDENCE": json.dumps(les.evidence, sort_keys=True),
                    "DIAGNOSIS": les.diagnosis,
                    "NEXT_SUBGOAL": les.next_subgoal,
                    "AVOID": json.dumps(les.avoid),
                    "TRY": json.dumps(les.try_),
                    "EXPIRY": les.expiry,
                },
            )
            for i, les in enumerate(self.lessons, 1)
        ]
        return t.render("memory_header", {"LESSONS": "\n".join(entries)})

    def system_prompt(self) -> str:
        base = load_template("react").render("system", self.system_common())
        return self.disclose(base + "\n" + load_template("reflexion").render("actor_note", {}))

    async def decide(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        self.lessons = [les for les in self.lessons if obs.step - les.created < LESSON_TTL]
        evidence = self.evidence(obs)
        if evidence is not None:
            await self.reflect(obs, evidence)
        got = await self.ask_action(
            self.system_prompt(),
            self.user_prompt(obs, self.memory_block()),
            obs,
            contract="react_action",
        )
        if got is None:
            return None
        action, reply = got
        return action, str((reply.doc or {}).get("thought", ""))
