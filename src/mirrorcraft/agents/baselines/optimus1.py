"""Optimus-1 on the semantic-skill body: knowledge-guided planning and experience-driven reflection.

Optimus-1's hybrid multimodal memory has two parts, both built from the agent's
own play and kept across episodes (``optimus1_memory``): a knowledge graph of
item dependencies learned from observed crafts, smelts, mines and kills, and an
experience pool of task-level summaries of past episodes, successes and failures.

- **Knowledge-guided planner**: one call (``plan``) shown the part of the graph
  that leads to the goal items (by level) and the retrieved experiences.
- **Experience-driven reflector**: after a failed subgoal, one call
  (``reflect``) shown the typed feedback and the retrieved experiences judges
  ``continue`` (run the subgoal again; at most ``max_continues`` times in a row),
  ``done`` (its purpose is met) or ``replan`` (a new plan, told why).
- **Learning**: every successful action result adds or confirms graph edges (no
  model call); every episode adds one experience summary at its end (no call).

Reflection calls count as the method's memory calls (they exist to consult the
experience pool).
"""

from __future__ import annotations

from typing import Any

from mirrorcraft.agents.baselines.executor import SubgoalAgent, estimate_tokens
from mirrorcraft.agents.baselines.jarvis1 import jaccard
from mirrorcraft.agents.baselines.optimus1_memory import (
    add_edges,
    goal_subgraph,
    learn_edges,
    render_graph,
)
from mirrorcraft.agents.mineevolve.feedback import Feedback
from mirrorcraft.agents.mineevolve.plan import Plan, Subgoal
from mirrorcraft.agents.mineevolve.prompting import compact, subgoal_line, task_text
from mirrorcraft.body.observation import Observation

JUDGEMENTS = ("continue", "done", "replan")


class Optimus1Agent(SubgoalAgent):
    method = "optimus1"
    template_names = ("common", "baselines", "optimus1")
    keeps_memory = True
    memory_kinds = ("edge", "experience")

    def begin_episode(self) -> None:
        self.route = sorted(self.prior.relevant) if self.prior is not None else []
        self.reflection: dict[str, str] | None = None
        self.continues = 0
        self.actions_seen = 0

    # -- the knowledge graph -------------------------------------------------------------------
    def observe_result(self, action: dict[str, Any], obs: Observation) -> None:
        self.actions_seen += 1
        if obs.last_result is None:
            return
        edges = learn_edges(action, obs.last_result, obs.inventory, self.tools)
        new = add_edges(self.memory, edges)
        if new:
            self.stats.count("edges_added", new)

    def graph_text(self) -> str:
        goals = [*self.goal_items] or self.route[:1]
        nodes = goal_subgraph(self.memory, goals, self.settings.max_graph_nodes, self.route)
        return render_graph(nodes)

    # -- the experience pool -------------------------------------------------------------------
    def experience_score(self, exp: dict[str, Any]) -> float:
        assert self.ctx is not None
        if exp.get("task") == self.ctx.task:
            return 1.0
        return round(jaccard(exp.get("route", ()), self.route), 4)

    def render_experience(self, exp: dict[str, Any]) -> str:
        last = exp.get("last_failure") or ""
        return self.prompts.render(
            "experience",
            {
                "TASK": str(exp.get("task")),
                "OUTCOME": "success" if exp.get("success") else "failure",
                "ACTIONS": str(exp.get("actions", 0)),
                "SUBGOALS": "; ".join(exp.get("subgoals", [])) or "none",
                "FAILURES": compact(exp.get("failures", {})),
                "LAST": f"; last failure: {last}" if last else "",
            },
        )

    def retrieve(self) -> list[tuple[str, dict[str, Any], str]]:
        """The best-matching experiences, a success and a failure first when both match."""
        started = self.timed()
        ranked = sorted(
            (
                (self.experience_score(e), key, e)
                for key, e in self.memory.of_kind("experience")
                if self.experience_score(e) > 0
            ),
            key=lambda x: (-x[0], x[1]),
        )
        firsts = []
        for outcome in (True, False):
            hit = next((x for x in ranked if bool(x[2].get("success")) == outcome), None)
            if hit is not None:
                firsts.append(hit)
        ordered = sorted(firsts, key=lambda x: (-x[0], x[1])) + [
            x for x in ranked if x not in firsts
        ]
        chosen: list[tuple[str, dict[str, Any], str]] = []
        used = 0
        for _score, key, exp in ordered:
            if len(chosen) >= self.limits.top_k:
                break
            text = self.render_experience(exp)
            cost = estimate_tokens(text + "\n")
            if used + cost > self.limits.budget_tokens:
                continue
            chosen.append((key, exp, text))
            used += cost
        self.stats.retrieval(len(chosen), used, self.timed() - started)
        return chosen

    # -- planning and reflection ------------------------------------------------------------------
    async def make_plan(self, obs: Observation, *, stale: bool = False) -> Plan | None:
        experiences = self.retrieve()
        graph = self.graph_text()
        reflection = (
            self.prompts.render("reflection", self.reflection)
            if self.reflection
            else self.prompts.render("no_reflection", {})
        )
        user = self.prompts.render(
            "plan_user",
            {
                "TASK": task_text(obs),
                "GRAPH": graph,
                "EXPERIENCES": "\n".join(t for _k, _e, t in experiences) or "none",
                "DONE": "\n".join(subgoal_line(sg) for sg in self.completed[-8:]) or "none",
                "REFLECTION": reflection,
                "OBSERVATION": self.observation_text(obs),
            },
        )
        system = self.disclose(self.prompts.render("plan_system", self.system_parts()))
        extra = {"graph": graph, "experiences": [dict(e, id=k) for k, e, _t in experiences]}
        subgoals = await self.ask_json(system, user, "plan", obs, extra, self.parse_plan())
        self.reflection = None
        if subgoals is None:
            return None
        return self.new_plan(subgoals)

    async def on_failure(self, fb: Feedback, sg: Subgoal, obs: Observation) -> int:
        assert self.plan is not None
        experiences = self.retrieve()
        user = self.prompts.render(
            "reflect_user",
            {
                "TASK": task_text(obs),
                "SUBGOAL": compact(sg.to_json()),
                "FEEDBACK": compact(fb.view()),
                "EXPERIENCES": "\n".join(t for _k, _e, t in experiences) or "none",
                "OBSERVATION": self.observation_text(obs),
            },
        )
        system = self.disclose(self.prompts.render("reflect_system", {}))
        extra = {"feedback": fb.view(), "failing": sg.to_json(), "continues": self.continues}

        def parse(doc: dict[str, Any] | None) -> tuple[tuple[str, str] | None, str]:
            verdict = (doc or {}).get("judgement")
            if verdict not in JUDGEMENTS:
                return None, f"judgement must be one of {', '.join(JUDGEMENTS)}"
            return (str(verdict), str((doc or {}).get("reason", ""))[:300]), ""

        got = await self.ask_json(system, user, "reflect", obs, extra, parse, memory=True)
        verdict, reason = got if got is not None else ("replan", "the reflector gave no judgement")
        if verdict == "continue" and self.continues >= self.settings.max_continues:
            verdict, reason = "replan", f"{reason} (the subgoal already ran again)"
        self.stats.count(f"reflect_{verdict}")
        if verdict == "continue":
            self.continues += 1
            return 0
        self.continues = 0
        if verdict == "done":
            self.plan.done += 1
            self.completed.append(sg)
            return 0
        self.reflection = {"SUBGOAL": sg.id, "FAILURE": fb.failure_type, "REASON": reason or "-"}
        self.stats.replans += 1
        self.plan = Plan(self.plan.id, self.plan.prefix, self.plan.done)
        return 0

    async def after_success(self, fb: Feedback, sg: Subgoal, obs: Observation) -> None:
        self.continues = 0

    # -- the episode's summary ------------------------------------------------------------------------
    def end_episode(self, obs: Observation, success: bool) -> None:
        if self.ctx is None:
            return
        failures: dict[str, int] = {}
        last = ""
        for fb, sg in self.history_fb:
            if not fb.success:
                failures[fb.failure_type] = failures.get(fb.failure_type, 0) + 1
                last = f"{sg.condition}: {fb.failure_type}"
        limit = self.settings.max_experience_subgoals
        self.memory.put(
            self.memory.fresh_id("experience"),
            {
                "kind": "experience",
                "task": self.ctx.task,
                "route": self.route,
                "success": success,
                "subgoals": [sg.condition for sg in self.completed][-limit:],
                "failures": dict(sorted(failures.items())),
                "last_failure": last,
                "actions": obs.budget.used,
            },
        )
