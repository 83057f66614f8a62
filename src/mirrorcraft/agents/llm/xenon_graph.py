"""XENON's adaptive dependency graph and failure-aware action memory (no model calls here).

The graph starts as the model's prior (nodes with hypothesised requirements),
is cycle-free, and is corrected only by the agent's own outcomes:

- an action that produced its intended item makes that node *verified* and,
  for a craft or smelt, replaces its requirements by what was actually consumed
  (and the station used);
- an action that produced something else marks the intended node's
  requirements that the action consumed as *contradicted*, flags the node
  ``revisionNeeded``, and adds each observed output as a verified node;
- two failures on the same subgoal flag that node ``revisionNeeded`` (see
  ``XenonAgent``); producing it later clears the flag.

Capacity 32 nodes: when a new node does not fit, a non-root node goes, chosen
by (hypothesis before revisionNeeded before verified, least recently touched,
oldest). A requirement that is no longer a node is treated as a leaf to obtain.

The memory holds at most 32 outcome records keyed by (subgoal, action); when
full, the record retrieved least often goes, the oldest first among equals.
Retrieval returns at most 3 records relevant to the current frontier.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.agents.llm.replies import whole_number
from mirrorcraft.agents.llm.worldview import norm

GRAPH_CAPACITY = 32
MEMORY_CAPACITY = 32
RETRIEVE_LIMIT = 3
OBSERVED_ACTIONS = 3
_STATUS_RANK = {"hypothesis": 0, "revisionNeeded": 1, "verified": 2}


@dataclass
class Requirement:
    item: str
    count: int = 1
    status: str = "hypothesis"  # hypothesis | verified | contradicted

    def to_json(self) -> dict[str, Any]:
        return {"item": self.item, "count": self.count, "status": self.status}


@dataclass
class Node:
    item: str
    requirements: list[Requirement] = field(default_factory=list)
    hint: str = ""
    status: str = "hypothesis"  # hypothesis | verified | revisionNeeded
    observed: list[Any] = field(default_factory=list)
    """Actions that actually produced this item in this episode (the latest few)."""
    touched: int = 0
    order: int = 0

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "item": self.item,
            "status": self.status,
            "requirements": [r.to_json() for r in self.requirements],
        }
        if self.hint:
            doc["action_hint"] = self.hint
        if self.observed:
            doc["observedActions"] = self.observed
        return doc


@dataclass
class DependencyGraph:
    root: str
    capacity: int = GRAPH_CAPACITY
    nodes: dict[str, Node] = field(default_factory=dict)
    added: int = 0
    evicted: list[str] = field(default_factory=list)
    rejected_edges: list[tuple[str, str]] = field(default_factory=list)
    """Prior edges dropped because they would have closed a cycle."""

    def __post_init__(self) -> None:
        self.root = norm(self.root)
        if self.root not in self.nodes:
            self._insert(Node(self.root, hint="the final goal"), 0)

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def from_prior(
        cls, root: str, doc: dict[str, Any] | None, capacity: int = GRAPH_CAPACITY
    ) -> tuple[DependencyGraph, str]:
        """The initial graph from an initializer reply, and a problem ('' when the reply was usable)."""
        graph = cls(root, capacity)
        raw = doc.get("nodes") if isinstance(doc, dict) else None
        if not isinstance(raw, list) or not raw:
            return graph, "no non-empty 'nodes' list"
        model_root = norm(doc.get("root")) if isinstance(doc, dict) else ""
        entries = []
        for entry in raw:
            if not isinstance(entry, dict) or not norm(entry.get("item")):
                continue
            item = norm(entry["item"])
            item = graph.root if item == model_root else item
            raw_reqs = entry.get("requirements")
            reqs = raw_reqs if isinstance(raw_reqs, list) else []
            pairs = []
            for r in reqs:
                if isinstance(r, dict) and norm(r.get("item")):
                    count = whole_number(r.get("count", 1))  # "8" (quoted) is 8 too
                    pairs.append(
                        (norm(r["item"]), count if count is not None and 0 < count <= 64 else 1)
                    )
                elif isinstance(r, str) and norm(r):
                    pairs.append((norm(r), 1))
            entries.append((item, pairs, str(entry.get("action_hint") or "")[:120]))
        for item, _pairs, hint in entries:
            if item not in graph.nodes and len(graph.nodes) < capacity:
                graph._insert(Node(item, hint=hint), 0)
            elif item in graph.nodes and hint and not graph.nodes[item].hint:
                graph.nodes[item].hint = hint
        for item, pairs, _hint in entries:
            node = graph.nodes.get(item)
            if node is None:
                continue
            for req, count in pairs:
                if req == item or graph.reaches(req, item):
                    graph.rejected_edges.append((item, req))
                    continue
                if all(r.item != req for r in node.requirements):
                    node.requirements.append(Requirement(req, count))
        return graph, ""

    def _insert(self, node: Node, step: int) -> Node:
        while len(self.nodes) >= self.capacity:
            candidates = [n for n in self.nodes.values() if n.item != self.root]
            if not candidates:
                break
            victim = min(
                candidates, key=lambda n: (_STATUS_RANK.get(n.status, 0), n.touched, n.order)
            )
            del self.nodes[victim.item]
            self.evicted.append(victim.item)
        self.added += 1
        node.order, node.touched = self.added, step
        self.nodes[node.item] = node
        return node

    def node(self, item: str, step: int) -> Node:
        name = norm(item)
        found = self.nodes.get(name)
        if found is None:
            return self._insert(Node(name), step)
        found.touched = step
        return found

    def reaches(self, start: str, goal: str) -> bool:
        """Is ``goal`` among the (transitive) requirements of ``start``?"""
        todo, seen = [start], set()
        while todo:
            item = todo.pop()
            if item == goal:
                return True
            if item in seen:
                continue
            seen.add(item)
            node = self.nodes.get(item)
            if node is not None:
                todo.extend(r.item for r in node.requirements)
        return False

    # -- corrections from outcomes ----------------------------------------------------------
    def verify(
        self, item: str, action: Any, step: int, inputs: dict[str, int] | None, station: str | None
    ) -> Node:
        """``item`` was actually produced by ``action`` (inputs: what a craft/smelt consumed)."""
        node = self.node(item, step)
        node.status = "verified"
        if action not in node.observed:
            node.observed = [*node.observed, action][-OBSERVED_ACTIONS:]
        if inputs is not None:
            observed = dict(inputs)
            if station:
                observed[station] = 1
            reqs = []
            for req, count in sorted(observed.items()):
                if req != node.item and not self.reaches(req, node.item):
                    reqs.append(Requirement(req, count, "verified"))
            node.requirements = reqs
        return node

    def contradict(self, intended: str, consumed: dict[str, int], step: int) -> Node:
        """The action meant to make ``intended`` made something else."""
        node = self.node(intended, step)
        for r in node.requirements:
            if r.item in consumed:
                r.status = "contradicted"
        node.status = "revisionNeeded"
        return node

    def needs_revision(self, item: str, step: int) -> Node:
        node = self.node(item, step)
        if node.item != self.root:
            node.status = "revisionNeeded"
        return node

    # -- reading ----------------------------------------------------------------------------
    def frontier(self, have: Callable[[str, int], bool], step: int) -> tuple[list[str], list[str]]:
        """(frontier, revision_needed): unmet nodes whose requirements are all met, walking down
        from the root; nodes flagged revisionNeeded are listed apart and not walked through."""
        out: list[str] = []
        revision: list[str] = []
        seen: set[str] = set()

        def visit(item: str, count: int) -> None:
            if item in seen or have(item, count):
                return
            seen.add(item)
            node = self.nodes.get(item)
            if node is not None:
                node.touched = step
                if node.status == "revisionNeeded":
                    revision.append(item)
                    return
            reqs = [r for r in node.requirements if r.status != "contradicted"] if node else []
            missing = [r for r in reqs if not have(r.item, r.count)]
            if not missing:
                out.append(item)
                return
            for r in missing:
                visit(r.item, r.count)

        visit(self.root, 1)
        return out, revision

    def to_json(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "nodes": [n.to_json() for n in sorted(self.nodes.values(), key=lambda n: n.order)],
        }


@dataclass
class MemoryEntry:
    subgoal: str
    action: Any
    outcome: str  # success | failed | unexpected_output
    reason: str
    produced: dict[str, int]
    consumed: dict[str, int]
    step: int
    inventory: str
    """The inventory when it happened (an invalid action may become valid once it changes)."""
    retrieved: int = 0

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "subgoal": self.subgoal,
            "action": self.action,
            "outcome": self.outcome,
            "step": self.step,
        }
        if self.reason:
            doc["reason"] = self.reason
        if self.produced:
            doc["produced"] = self.produced
        if self.consumed:
            doc["consumed"] = self.consumed
        if self.outcome != "success":
            doc["invalid_for_subgoal"] = True
        return doc


@dataclass
class ActionMemory:
    capacity: int = MEMORY_CAPACITY
    entries: dict[tuple[str, str], MemoryEntry] = field(default_factory=dict)
    evicted: int = 0

    def __len__(self) -> int:
        return len(self.entries)

    def record(self, key: str, entry: MemoryEntry) -> None:
        old = self.entries.pop((entry.subgoal, key), None)
        if old is not None:
            entry.retrieved = old.retrieved
        while len(self.entries) >= self.capacity:
            victim = min(self.entries.items(), key=lambda kv: (kv[1].retrieved, kv[1].step))
            del self.entries[victim[0]]
            self.evicted += 1
        self.entries[(entry.subgoal, key)] = entry

    def invalid(self, subgoal: str, key: str, inventory: str) -> MemoryEntry | None:
        """The record that marks this action invalid for this subgoal in this same inventory, if any."""
        entry = self.entries.get((subgoal, key))
        if entry is not None and entry.outcome != "success" and entry.inventory == inventory:
            return entry
        return None

    @staticmethod
    def score(entry: MemoryEntry, focus: set[str]) -> int:
        """+3 when its subgoal is a focus item, +2 when it produced one, +1 when it consumed one;
        +1 more for a failure or unexpected output once relevant (failures are what to avoid)."""
        value = (
            3 * (entry.subgoal in focus)
            + 2 * bool(set(entry.produced) & focus)
            + bool(set(entry.consumed) & focus)
        )
        return value + (1 if value and entry.outcome != "success" else 0)

    def retrieve(self, focus: set[str], limit: int = RETRIEVE_LIMIT) -> list[MemoryEntry]:
        ranked = sorted(
            ((self.score(e, focus), e) for e in self.entries.values()),
            key=lambda x: (-x[0], -x[1].step),
        )
        chosen = [e for v, e in ranked if v > 0][:limit]
        for e in chosen:
            e.retrieved += 1
        return chosen
