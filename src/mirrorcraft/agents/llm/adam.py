"""ADAM within one episode: planner, actor and causal discovery over a causal graph.

When the model is called (only the actor's action, or a probe, acts):

- *discovery* (no action): when the latest transition gave a group of the same
  sample_key its second (or later) successful sample, or was a successful craft
  or smelt, or a probe outcome arrived, or 8 actions passed since the last
  discovery with new samples. It sees the groups that gained a sample since
  the previous discovery (at most 12). One JSON repair call on an unusable
  reply; if still unusable, nothing is added. The agent, not the model, sets
  each proposed edge's status (see ``adam_causal``).
- *planner* (no action): at the first decision; after a milestone is reached;
  when every plan entry is completed; after 2 failed actions since the last
  plan; after a probe outcome; and every 10 actions. It returns at most 8
  ordered subgoals; one JSON repair call on an unusable reply, after which the
  old plan is kept (or, with none, the unfinished milestones of the route).
- *actor*: every step without a probe, for one action and its immediate
  subgoal. A reply without a usable action gets a JSON-repair call; an action
  that already failed in this same inventory gets a rejected-action call; if
  the second reply is unusable too, one fallback call; if that fails, the
  episode ends with no executable action.

Probes: at most 2 per episode, never while 12 or fewer actions remain. One is
scheduled (instead of an actor call) only when an uncertain dependency blocks
progress: the first open plan entry has a hypothesis or learned (not yet
verified) edge bearing on it, and the last action failed or the last 3 actions
gained neither an item nor score. A probe is an ordinary primitive action on the
current inventory and costs one action like any other. Everything is cleared at
the start of each episode.
"""

from __future__ import annotations

from typing import Any

from mirrorcraft.agents.llm.adam_causal import (
    CausalGraph,
    Transition,
    TransitionMemory,
    judge_probe,
    plan_probe,
)
from mirrorcraft.agents.llm.base import LLMAgent, Reply
from mirrorcraft.agents.llm.history import j
from mirrorcraft.agents.llm.replies import action_from, preview
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.agents.llm.worldview import (
    action_key,
    action_target,
    fuel_of,
    have,
    inputs_of,
    norm,
)
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta

PLAN_LIMIT = 8
MAX_PROBES = 2
PROBE_FREE_TAIL = 12
PLAN_EVERY = 10
DISCOVER_EVERY = 8
FAILURES_BEFORE_REPLAN = 2
STALL_WINDOW = 3
MEMORY_SHOWN = 8


def _j(value: Any) -> str:
    return j(value)


class AdamAgent(LLMAgent):
    template_names = ("common", "adam")

    def reset(self) -> None:
        self.graph = CausalGraph()
        self.memory = TransitionMemory()
        self.plan: list[dict[str, str]] = []
        self.plan_step = 0
        self.plan_score = 0
        self.failures_since_plan = 0
        self.replan = False
        self.discover_now = False
        self.discovered_upto = -1
        self.discovery_step = 0
        self.probes: list[dict[str, Any]] = []
        self.tried: set[str] = set()
        self.pending_probe: dict[str, Any] | None = None
        self.intent: tuple[str, dict[str, Any]] | None = None
        self.prev_obs: Observation | None = None

    def learned_rules(self) -> list[dict[str, str]] | None:
        """Edges an executed intervention verified: the LEARNED RULES of the observation block."""
        out = []
        for edge in self.graph.edges.values():
            if edge.status != "verified":
                continue
            skill, _, args = edge.sample_key.partition(" ")
            effects = ", ".join(sorted(edge.effect_names())) or "nothing"
            out.append({"skill": skill, "target": args, "output": effects})
        return out

    async def decide(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        self._ingest(obs)
        if self.discover_now or (
            obs.step - self.discovery_step >= DISCOVER_EVERY
            and any(t.ok and t.step > self.discovered_upto for t in self.memory.items)
        ):
            await self._discover(obs)
        if self._plan_due(obs):
            await self._plan(obs)
        probe = self._probe(obs)
        if probe is not None:
            return probe
        return await self._act(obs)

    # -- observing outcomes -----------------------------------------------------------------
    def _ingest(self, obs: Observation) -> None:
        before, self.prev_obs = self.prev_obs, obs
        acted = self.intent
        if acted is None and self.pending_probe is not None:
            acted = ("probe", self.pending_probe["action"])
        self.intent = None
        if before is None or acted is None or not self.history.steps:
            return
        subgoal, action = acted
        step = self.history.steps[-1]
        r = step.result
        t = Transition(
            step.index,
            action,
            subgoal,
            r.ok,
            r.reason,
            dict(step.before),
            inputs_of(r),
            fuel_of(r),
            {k: int(v) for k, v in sorted(r.produced.items()) if v > 0},
            tuple(sorted({f.id for f in obs.facilities} - {f.id for f in before.facilities})),
            tuple(
                sorted(
                    {norm(a) for a in obs.progress.completed_advancements}
                    - {norm(a) for a in before.progress.completed_advancements}
                )
            ),
            probe=self.pending_probe is not None,
        )
        self.memory.add(t)
        self.graph.refresh(t.key, self.memory)
        if not r.ok:
            self.failures_since_plan += 1
        if self.pending_probe is not None:
            edge = self.graph.edges.get(self.pending_probe["edge"])
            verdict = (
                judge_probe(self.pending_probe, edge, r.ok, t.effects)
                if edge
                else "edge no longer held"
            )
            self.probes[-1]["verdict"] = verdict
            self.pending_probe = None
            self.replan = self.discover_now = True
        elif (
            t.ok
            and (t.added or t.ingredients)
            and (len(self.memory.group(t.key)) >= 2 or r.skill in ("craft_grid", "smelt"))
        ):
            self.discover_now = True

    # -- causal discovery -------------------------------------------------------------------
    async def _discover(self, obs: Observation) -> None:
        self.discover_now = False
        self.discovery_step = obs.step
        groups = self.memory.groups(since=self.discovered_upto)
        self.discovered_upto = max(
            (t.step for t in self.memory.items), default=self.discovered_upto
        )
        if not groups:
            return
        t = load_template("adam")
        system = self.disclose(t.render("discovery_system", {}))
        values = {"GROUPS": _j(groups), "GRAPH": _j(self.graph.to_json())}
        extra = {"obs": obs, "groups": groups}
        reply = await self.call(
            system,
            t.render("discovery_user", {**values, "REPAIR": ""}),
            CallMeta("discover", "adam_discovery", self.fields(obs), extra),
        )
        edges = (reply.doc or {}).get("edges")
        if not isinstance(edges, list):
            self.unusable()
            note = t.render(
                "discovery_repair",
                {"PROBLEM": "no 'edges' list", "PREVIOUS": preview(reply.text) or "(empty)"},
            )
            reply = await self.call(
                system,
                t.render("discovery_user", {**values, "REPAIR": note}),
                CallMeta("discover_repair", "adam_discovery", self.fields(obs), extra),
            )
            edges = (reply.doc or {}).get("edges")
            if not isinstance(edges, list):
                self.unusable()
        for doc in edges if isinstance(edges, list) else []:
            self.graph.propose(doc, self.memory, obs.step)

    # -- planning ---------------------------------------------------------------------------
    def plan_json(self, obs: Observation) -> list[dict[str, Any]]:
        return [{**p, "completed": have(obs, p["target"])} for p in self.plan]

    def first_open(self, obs: Observation) -> str | None:
        return next((p["target"] for p in self.plan if not have(obs, p["target"])), None)

    def _plan_due(self, obs: Observation) -> bool:
        return (
            not self.plan
            or self.first_open(obs) is None
            or obs.progress.score > self.plan_score
            or self.failures_since_plan >= FAILURES_BEFORE_REPLAN
            or obs.step - self.plan_step >= PLAN_EVERY
            or self.replan
        )

    async def _plan(self, obs: Observation) -> None:
        t = load_template("adam")
        f = self.fields(obs)
        system = self.disclose(t.render("planner_system", {}))
        values = {
            "TASK": _j({"goal": f["goal"], **f["task"]}),
            "TASK_STATE": _j(f["task_state"]),
            "INVENTORY": _j(f["inventory"]),
            "NEARBY_TARGETS": _j(f["nearby_targets"]),
            "NEARBY_ENTITIES": _j(f["nearby_entities"]),
            "CAPABILITIES": _j(f["capabilities"]),
            "FACILITIES": _j(sorted({x.id for x in obs.facilities})),
            "LAST_ACTION": _j(f["last_action_feedback"]),
            "CONSTRAINTS": _j(f["blocked_actions"]),
            "GRAPH": _j(self.graph.to_json()),
            "MAX_SUBGOALS": str(PLAN_LIMIT),
        }
        extra = {"obs": obs}
        reply = await self.call(
            system,
            t.render("planner_user", {**values, "REPAIR": ""}),
            CallMeta("plan", "adam_plan", f, extra),
        )
        plan = _subgoals(reply)
        if not plan:
            self.unusable()
            note = t.render(
                "planner_repair",
                {
                    "PROBLEM": "no usable 'subgoals' list",
                    "PREVIOUS": preview(reply.text) or "(empty)",
                },
            )
            reply = await self.call(
                system,
                t.render("planner_user", {**values, "REPAIR": note}),
                CallMeta("plan_repair", "adam_plan", f, extra),
            )
            plan = _subgoals(reply)
            if not plan:
                self.unusable()
        if plan:
            self.plan = plan
        elif not self.plan:
            self.plan = [
                {"target": norm(m.advancement), "reason": "unfinished milestone"}
                for m in obs.progress.milestones
                if not m.done
            ][:PLAN_LIMIT]
        self.plan_step, self.plan_score = obs.step, obs.progress.score
        self.failures_since_plan, self.replan = 0, False

    # -- probes -----------------------------------------------------------------------------
    def _stuck(self) -> bool:
        steps = self.history.steps
        if not steps:
            return False
        if not steps[-1].result.ok:
            return True
        tail = steps[-STALL_WINDOW:]
        return len(tail) == STALL_WINDOW and not any(
            s.score_after > s.score_before
            or any(v > s.before.get(k, 0) for k, v in s.after.items())
            for s in tail
        )

    def _probe(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        if len(self.probes) >= MAX_PROBES or obs.budget.remaining <= PROBE_FREE_TAIL:
            return None
        target = self.first_open(obs)
        if target is None or not self._stuck():
            return None
        for edge in self.graph.related(target, self.memory):
            probe = plan_probe(edge, self.memory, obs, self.tried)
            if probe is not None:
                self.tried.add(action_key(probe["action"]))
                self.probes.append(
                    {"step": obs.step, "target": target, "remaining": obs.budget.remaining, **probe}
                )
                self.pending_probe = probe
                return probe["action"], f"probe ({probe['kind']}) of {edge.sample_key} for {target}"
        return None

    # -- acting -----------------------------------------------------------------------------
    async def _act(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        t = load_template("adam")
        system = self.disclose(t.render("actor_system", self.system_common()))
        values = {
            "PLAN": _j(self.plan_json(obs)),
            "GRAPH": _j(self.graph.to_json()),
            "MEMORY": _j([m.record() for m in self.memory.items[-MEMORY_SHOWN:]]),
            "OBSERVATION": self.observation_text(obs),
        }
        extra = {"obs": obs, "plan": self.plan_json(obs)}
        blocked = {action_key(b["action"]) for b in self.history.still_blocked(dict(obs.inventory))}
        rejected: Any = None
        for purpose in ("act", "act_rejected", "act_fallback"):
            shown = t.render("nothing", {}) if rejected is None else _j(rejected)
            reply = await self.call(
                system,
                t.render("actor_user", {**values, "REJECTED": shown}),
                CallMeta(purpose, "adam_action", self.fields(obs), extra),
            )
            action, problem = action_from(reply.doc)
            if action is None:
                rejected = {"invalid_reply": preview(reply.text) or "(empty)", "problem": problem}
                continue
            if action_key(action) in blocked and purpose != "act_fallback":
                rejected = {
                    "action": action,
                    "problem": "this action already failed with the same inventory",
                }
                continue
            subgoal = (
                norm((reply.doc or {}).get("subgoal"))
                or action_target(action)
                or str(action["skill"])
            )
            self.intent = (subgoal, action)
            return action, f"[{subgoal}] {(reply.doc or {}).get('thought', '')}".strip()
        return None


def _subgoals(reply: Reply) -> list[dict[str, str]]:
    raw = (reply.doc or {}).get("subgoals")
    if not isinstance(raw, list):
        return []
    out: list[dict[str, str]] = []
    for item in raw:
        target = (
            norm(item.get("target"))
            if isinstance(item, dict)
            else norm(item)
            if isinstance(item, str)
            else ""
        )
        if target and all(p["target"] != target for p in out):
            out.append(
                {
                    "target": target,
                    "reason": str(item.get("reason", ""))[:160] if isinstance(item, dict) else "",
                }
            )
    return out[:PLAN_LIMIT]
