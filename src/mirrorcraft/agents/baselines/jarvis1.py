"""JARVIS-1 reduced to its text core: plans that worked, retrieved by task and situation.

JARVIS-1 couples a planner with a multimodal memory of successful plans that
grows across episodes. Without pixels, a memory entry is text: the task, the
situation the episode started in (biome, owned items, what was in sight) and the
subgoals that reached the goal, in order.

- **Retrieval**: score = task similarity + ``situation_weight`` x situation
  similarity. Task similarity is 1 for the same task, otherwise the overlap
  (Jaccard) of the two tasks' route items (what the public vanilla prior expects
  on the way); situation similarity averages the overlap of owned items and of
  things in sight, plus agreement of the biome. Entries below ``min_score`` are
  dropped; the best are shown, best first, within the same top-K and token budget
  MineEvolve's curator has (mineevolve.yaml ``curator.top_k`` and
  ``curator.budget_tokens``). A plan too long for what is left of the budget is
  shown from its start, as many subgoals as fit.
- **Planning**: one call (``plan``) with the retrieved plans as examples, at the
  start, when a plan runs out, and after every failed subgoal (re-planning with
  the failure stated, JARVIS-1's self-check).
- **Growing the memory**: an episode that reaches its goal adds its completed
  subgoals as a plan for its task and starting situation (no model call); the
  same plan for the same task only raises that entry's support.
"""

from __future__ import annotations

import json
from typing import Any

from mirrorcraft.agents.baselines.executor import SubgoalAgent, estimate_tokens
from mirrorcraft.agents.mineevolve.feedback import Feedback
from mirrorcraft.agents.mineevolve.plan import Plan, Subgoal
from mirrorcraft.agents.mineevolve.prompting import compact, subgoal_line, task_text
from mirrorcraft.body.observation import Observation


def jaccard(a: Any, b: Any) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa or sb else 1.0


def situation_of(obs: Observation) -> dict[str, Any]:
    return {
        "biome": obs.biome,
        "inventory": sorted(i for i, n in obs.inventory.items() if n > 0),
        "near": sorted({n.id for n in (*obs.nearby_blocks, *obs.nearby_entities)}),
    }


def situation_similarity(a: dict[str, Any], b: dict[str, Any]) -> float:
    return round(
        0.4 * jaccard(a.get("inventory", ()), b.get("inventory", ()))
        + 0.4 * jaccard(a.get("near", ()), b.get("near", ()))
        + 0.2 * float(a.get("biome") == b.get("biome")),
        4,
    )


def _arg(key: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    if key == "grid" and isinstance(value, list) and all(isinstance(r, list) for r in value):
        rows = "/".join(",".join("_" if c is None else str(c) for c in row) for row in value)
        return f"[{rows}]"
    return compact(value)


def step_text(step: dict[str, Any]) -> str:
    """A stored subgoal in a few characters: ``skill(arg=value,...)->check:target:n``."""
    action = step.get("action", {}) if isinstance(step.get("action"), dict) else {}
    args = action.get("args", {}) if isinstance(action.get("args"), dict) else {}
    arg_text = ",".join(f"{k}={_arg(k, v)}" for k, v in sorted(args.items()))
    checks = []
    for c in step.get("checks", []):
        if not isinstance(c, dict):
            continue
        target = next((str(c[k]) for k in ("item", "block", "target", "advancement") if k in c), "")
        checks.append(":".join(str(x) for x in (c.get("type"), target, c.get("n", "")) if x != ""))
    return f"{action.get('skill')}({arg_text})->{';'.join(checks)}"


def step_signature(step: dict[str, Any]) -> str:
    return json.dumps([step.get("action"), step.get("checks")], sort_keys=True)


SITUATION_NEAR = 8
"""Things in sight an example's situation shows (its similarity uses all of them)."""


class Jarvis1Agent(SubgoalAgent):
    method = "jarvis1"
    template_names = ("common", "baselines", "jarvis1")
    keeps_memory = True
    memory_kinds = ("plan",)

    def begin_episode(self) -> None:
        self.start_situation: dict[str, Any] | None = None
        self.failure: tuple[Feedback, Subgoal] | None = None
        self.route = sorted(self.prior.relevant) if self.prior is not None else []

    # -- retrieval ---------------------------------------------------------------------------
    def score(self, entry: dict[str, Any], situation: dict[str, Any]) -> float:
        assert self.ctx is not None
        same = entry.get("task") == self.ctx.task
        task_sim = 1.0 if same else jaccard(entry.get("route", ()), self.route)
        sit = situation_similarity(entry.get("situation", {}), situation)
        return round(task_sim + float(self.settings.situation_weight) * sit, 4)

    def render(self, entry: dict[str, Any], score: float, shown: int | None = None) -> str:
        """An example; with ``shown``, only its first subgoals (the rest are counted)."""
        all_steps = list(entry.get("steps", []))
        kept = all_steps if shown is None else all_steps[:shown]
        steps = " | ".join(step_text(s) for s in kept)
        if len(kept) < len(all_steps):
            steps += f" | ... ({len(all_steps) - len(kept)} more subgoals)"
        situation = dict(entry.get("situation", {}))
        situation["near"] = list(situation.get("near", []))[:SITUATION_NEAR]
        return self.prompts.render(
            "example",
            {
                "TASK": str(entry.get("task")),
                "SCORE": f"{score:.2f}",
                "SITUATION": compact(situation),
                "SUPPORT": str(entry.get("support", 1)),
                "STEPS": steps,
            },
        )

    def shortened(self, entry: dict[str, Any], score: float, tokens: int) -> str:
        """The example with as many of its first subgoals as fit in ``tokens`` (at least one)."""
        steps = list(entry.get("steps", []))
        room = 4 * tokens - len(self.render(entry, score, 0)) - 40  # the "... more" note
        shown, used = 0, 0
        for step in steps:
            used += len(step_text(step)) + 3
            if used > room:
                break
            shown += 1
        text = self.render(entry, score, max(shown, 1))
        while shown > 1 and estimate_tokens(text + "\n") > tokens:
            shown -= 1
            text = self.render(entry, score, shown)
        return text

    def retrieve(self, obs: Observation) -> list[tuple[str, dict[str, Any], str]]:
        started = self.timed()
        situation = situation_of(obs)
        ranked = sorted(
            ((self.score(r, situation), key, r) for key, r in self.memory.of_kind("plan")),
            key=lambda x: (-x[0], x[1]),
        )
        chosen: list[tuple[str, dict[str, Any], str]] = []
        used = 0
        for score, key, entry in ranked:
            if score < self.settings.min_score or len(chosen) >= self.limits.top_k:
                break
            text = self.render(entry, score)
            left = self.limits.budget_tokens - used
            if estimate_tokens(text + "\n") > left:
                text = self.shortened(entry, score, left)
            cost = estimate_tokens(text + "\n")
            if used + cost > self.limits.budget_tokens:
                continue
            chosen.append((key, entry, text))
            used += cost
        self.stats.retrieval(len(chosen), used, self.timed() - started)
        return chosen

    # -- planning -------------------------------------------------------------------------------
    async def make_plan(self, obs: Observation, *, stale: bool = False) -> Plan | None:
        if self.start_situation is None:
            self.start_situation = situation_of(obs)
        examples = self.retrieve(obs)
        failure = self.prompts.render("no_failure", {})
        if self.failure is not None:
            fb, sg = self.failure
            failure = self.prompts.render(
                "failure",
                {
                    "SUBGOAL": sg.id,
                    "CONDITION": sg.condition,
                    "FAILURE": fb.failure_type,
                    "NOTE": fb.note or "the checks stayed unmet",
                },
            )
        user = self.prompts.render(
            "plan_user",
            {
                "TASK": task_text(obs),
                "EXAMPLES": "\n".join(text for _k, _e, text in examples) or "none",
                "DONE": "\n".join(subgoal_line(sg) for sg in self.completed[-8:]) or "none",
                "FAILURE": failure,
                "OBSERVATION": self.observation_text(obs),
            },
        )
        system = self.disclose(self.prompts.render("plan_system", self.system_parts()))
        extra = {"examples": [dict(e, id=k) for k, e, _t in examples]}
        subgoals = await self.ask_json(system, user, "plan", obs, extra, self.parse_plan())
        self.failure = None
        if subgoals is None:
            return None
        self.stats.count("examples_shown", len(examples))
        return self.new_plan(subgoals)

    async def on_failure(self, fb: Feedback, sg: Subgoal, obs: Observation) -> int:
        assert self.plan is not None
        self.failure = (fb, sg)
        self.stats.replans += 1
        self.plan = Plan(self.plan.id, self.plan.prefix, self.plan.done)
        return 0

    # -- memory ------------------------------------------------------------------------------------
    def end_episode(self, obs: Observation, success: bool) -> None:
        if not success or not self.completed or self.ctx is None:
            return
        steps: list[dict[str, Any]] = []
        for sg in self.completed:
            doc = {k: v for k, v in sg.to_json().items() if k not in ("subgoal_id", "source")}
            if not steps or step_signature(steps[-1]) != step_signature(doc):
                steps.append(doc)
        steps = steps[: self.settings.max_plan_steps]
        signature = [step_signature(s) for s in steps]
        for key, entry in self.memory.of_kind("plan"):
            same_steps = [step_signature(s) for s in entry.get("steps", [])] == signature
            if entry.get("task") == self.ctx.task and same_steps:
                self.memory.put(key, {**entry, "support": int(entry.get("support", 1)) + 1})
                self.stats.count("plans_reinforced")
                return
        self.memory.put(
            self.memory.fresh_id("plan"),
            {
                "kind": "plan",
                "task": self.ctx.task,
                "route": self.route,
                "situation": self.start_situation or situation_of(obs),
                "steps": steps,
                "support": 1,
            },
        )
        self.stats.count("plans_added")
