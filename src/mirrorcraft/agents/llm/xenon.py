"""XENON within one episode: an adaptive dependency graph and a failure-aware action memory.

When the model is called (only the action call acts):

- *initializer*: once, at the first decision, for the graph prior (at most 32
  nodes, cycles rejected). One JSON repair call when the reply is unusable; if
  it is still unusable the graph starts with the root alone.
- *action*: every step, with the current frontier (recomputed from the
  corrected graph), the graph, and at most 3 memory records relevant to the
  frontier. The reply names the action and its immediate ``subgoal``.
- *rejected proposal*: one more action call when the reply is unusable, has no
  subgoal, or repeats an action the memory marks invalid for the same subgoal
  in the same inventory. If that reply has no usable action either, the
  episode ends with no executable action.

After every action the agent reads its own result (never an evaluator label):
the memory records it, the graph is corrected (see ``xenon_graph``), and a
mechanically successful action that produced something other than its
subgoal counts as a failure for that subgoal. After 2 failures on the same
subgoal the node is flagged ``revisionNeeded`` and the frontier is recomputed
from the corrected graph (a replan, noted in the next prompt). Everything is
cleared at the start of each episode.
"""

from __future__ import annotations

import json
from typing import Any

from mirrorcraft.agents.llm.base import LLMAgent
from mirrorcraft.agents.llm.history import j
from mirrorcraft.agents.llm.replies import action_from, preview
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.agents.llm.worldview import (
    action_key,
    action_target,
    have,
    inputs_of,
    norm,
    station_of,
)
from mirrorcraft.agents.llm.xenon_graph import (
    GRAPH_CAPACITY,
    RETRIEVE_LIMIT,
    ActionMemory,
    DependencyGraph,
    MemoryEntry,
)
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta

FAILURES_BEFORE_REPLAN = 2
FRONTIER_SHOWN = 6
PRODUCING = ("craft_grid", "smelt", "mine", "attack")


def _j(value: Any) -> str:
    return j(value)


def _inventory_key(inventory: dict[str, int]) -> str:
    return _j(sorted(inventory.items()))


def _hit(subgoal: str, produced: dict[str, int]) -> bool:
    if subgoal in produced:
        return True
    return subgoal == "log" and any(k.endswith(("_log", "_stem")) for k in produced)


class XenonAgent(LLMAgent):
    template_names = ("common", "xenon")

    def reset(self) -> None:
        self.graph: DependencyGraph | None = None
        self.memory = ActionMemory()
        self.failures: dict[str, int] = {}
        self.intent: tuple[str, dict[str, Any]] | None = None
        self.replans: list[dict[str, Any]] = []
        self.contradictions: list[dict[str, Any]] = []
        self.retrieved_counts: list[int] = []
        self._graph_text: tuple[Any, str] | None = None

    def graph_text(self, graph: DependencyGraph) -> str:
        """The graph's compact JSON, encoded again only when it differs from the graph the
        last text was made from (compared with a private copy read back from that text)."""
        doc = graph.to_json()
        known = self._graph_text
        if known is None or known[0] != doc:
            text = _j(doc)
            known = self._graph_text = (json.loads(text), text)
        return known[1]

    # -- the graph prior --------------------------------------------------------------------
    async def _initialise(self, obs: Observation) -> DependencyGraph:
        t = load_template("xenon")
        f = self.fields(obs)
        root = obs.progress.milestones[-1].advancement
        system = self.disclose(t.render("init_system", {}))
        values = {
            "MAX_NODES": str(GRAPH_CAPACITY),
            "GOAL": f["goal"],
            "TASK": _j(f["task"]),
            "TASK_STATE": _j(f["task_state"]),
        }
        extra = {"obs": obs, "max_nodes": GRAPH_CAPACITY, "root": root}
        reply = await self.call(
            system,
            t.render("init_user", {**values, "REPAIR": ""}),
            CallMeta("init_graph", "xenon_graph", f, extra),
        )
        graph, problem = DependencyGraph.from_prior(root, reply.doc)
        if problem:
            self.unusable()
            note = t.render(
                "init_repair", {"PROBLEM": problem, "PREVIOUS": preview(reply.text) or "(empty)"}
            )
            reply = await self.call(
                system,
                t.render("init_user", {**values, "REPAIR": note}),
                CallMeta("init_graph_repair", "xenon_graph", f, extra),
            )
            graph, problem = DependencyGraph.from_prior(root, reply.doc)
            if problem:
                self.unusable()
        return graph

    # -- learning from the last outcome -----------------------------------------------------
    def _learn(self, graph: DependencyGraph, obs: Observation) -> None:
        if self.intent is None or not self.history.steps:
            return
        subgoal, action = self.intent
        self.intent = None
        step = self.history.steps[-1]
        r = step.result
        produced = {k: int(v) for k, v in sorted(r.produced.items()) if v > 0}
        inputs = inputs_of(r)
        transform = r.skill in ("craft_grid", "smelt")
        station = station_of(action)
        outcome = "success"
        if not r.ok:
            outcome = "failed"
        elif (
            r.skill in PRODUCING
            and produced
            and subgoal
            and "/" not in subgoal
            and not _hit(subgoal, produced)
        ):
            outcome = "unexpected_output"
        self.memory.record(
            action_key(action),
            MemoryEntry(
                subgoal,
                action,
                outcome,
                r.reason,
                produced,
                inputs,
                step.index,
                _inventory_key(dict(step.after)),
            ),
        )
        if outcome == "success":
            made = (
                produced
                if transform
                else {k: v for k, v in produced.items() if _hit(subgoal, {k: v})}
            )
            for item in made:
                graph.verify(item, action, obs.step, inputs if transform else None, station)
            self.failures.pop(subgoal, None)
            return
        if outcome == "unexpected_output":
            graph.contradict(subgoal, inputs, obs.step)
            outputs = (
                produced if transform else dict(sorted(produced.items(), key=lambda kv: -kv[1])[:2])
            )
            for item in outputs:
                graph.verify(item, action, obs.step, inputs if transform else None, station)
            self.contradictions.append(
                {
                    "step": step.index,
                    "subgoal": subgoal,
                    "action": action,
                    "produced": produced,
                    "consumed": inputs,
                }
            )
        self.failures[subgoal] = self.failures.get(subgoal, 0) + 1
        if subgoal and self.failures[subgoal] >= FAILURES_BEFORE_REPLAN:
            before, _rev = graph.frontier(lambda i, c: have(obs, i, c), obs.step)
            graph.needs_revision(subgoal, obs.step)
            after, revision = graph.frontier(lambda i, c: have(obs, i, c), obs.step)
            self.replans.append(
                {
                    "step": obs.step,
                    "subgoal": subgoal,
                    "frontier_before": before,
                    "frontier_after": after,
                    "revision_needed": revision,
                }
            )
            self.failures[subgoal] = 0

    # -- acting -----------------------------------------------------------------------------
    async def decide(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        if self.graph is None:
            self.graph = await self._initialise(obs)
        graph = self.graph
        self._learn(graph, obs)
        frontier, revision = graph.frontier(lambda i, c: have(obs, i, c), obs.step)
        focus = set(frontier) | set(revision)
        for item in list(focus):
            node = graph.nodes.get(item)
            focus |= {r.item for r in node.requirements} if node else set()
        retrieved = self.memory.retrieve(focus, RETRIEVE_LIMIT)
        self.retrieved_counts.append(len(retrieved))
        shown = [
            graph.nodes[i].to_json() if i in graph.nodes else {"item": i, "status": "unlisted"}
            for i in frontier[:FRONTIER_SHOWN]
        ]
        frontier_doc: dict[str, Any] = {
            "frontier": shown or [{"item": graph.root}],
            "revisionNeeded": revision,
        }
        if self.replans and self.replans[-1]["step"] == obs.step:
            frontier_doc["replanned"] = {
                "after_failures_on": self.replans[-1]["subgoal"],
                "previous_frontier": self.replans[-1]["frontier_before"],
            }
        t = load_template("xenon")
        system = self.disclose(t.render("action_system", self.system_common()))
        values = {
            "FRONTIER": _j(frontier_doc),
            "GRAPH": self.graph_text(graph),
            "MEMORY": _j([e.to_json() for e in retrieved]),
            "OBSERVATION": self.observation_text(obs),
        }
        extra = {"obs": obs, "frontier": frontier, "retrieved": [e.to_json() for e in retrieved]}
        user = t.render("action_user", {**values, "REJECTED": t.render("nothing", {})})
        reply = await self.call(
            system, user, CallMeta("act", "xenon_action", self.fields(obs), extra)
        )
        action, problem = action_from(reply.doc)
        subgoal = norm((reply.doc or {}).get("subgoal"))
        if action is not None and not subgoal:
            problem = "the reply has no subgoal"
        elif action is not None:
            invalid = self.memory.invalid(
                subgoal, action_key(action), _inventory_key(dict(obs.inventory))
            )
            if invalid is not None:
                problem = f"memory marks this action invalid for subgoal {subgoal} ({invalid.outcome} at step {invalid.step}) and the inventory has not changed since"
        if problem:
            rejected = {
                "proposal": reply.doc if reply.doc is not None else preview(reply.text),
                "problem": problem,
            }
            user = t.render("action_user", {**values, "REJECTED": _j(rejected)})
            reply = await self.call(
                system, user, CallMeta("act_rejected", "xenon_action", self.fields(obs), extra)
            )
            action, _problem = action_from(reply.doc)
            if action is None:
                return None
            subgoal = (
                norm((reply.doc or {}).get("subgoal"))
                or action_target(action)
                or str(action["skill"])
            )
        assert action is not None
        self.intent = (subgoal, action)
        thought = str((reply.doc or {}).get("thought", ""))
        return action, f"[{subgoal}] {thought}".strip()
