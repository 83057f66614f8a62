"""ADAM's causal module without the model: transitions, sample groups, the causal graph, probes.

- ``Transition``: one executed action with the inventory before it, what it
  consumed (ingredients and fuel apart), what it added, and any facility or
  advancement that appeared. ``sample_key`` names the grounded atomic action:
  the skill and its arguments without ``count`` (so a count-1 smelt is
  comparable with a count-3 smelt of the same input at the same station).
- ``TransitionMemory``: at most 32 transitions, oldest dropped first.
- ``CausalGraph``: edges proposed by the discovery call, at most 48 distinct
  nodes (cause and effect names). The agent, not the model, sets an edge's
  status: ``hypothesis`` (one sample, or evidence that does not repeat),
  ``learned`` (two or more comparable samples of its sample_key: the same
  ingredient set, and every effect added by each of them), ``verified`` or
  ``rejected`` (by an intervention probe). An edge claiming an effect no sample
  showed is refused. When nodes would exceed 48, edges go in this order:
  rejected, then hypotheses, then learned (least support, oldest first);
  verified edges stay. If the new edge still does not fit it is dropped.
- ``plan_probe``: an intervention on the current inventory for an uncertain
  edge: the same craft with one input removed (when the grid has two or more
  distinct inputs), else a repetition at the smallest scale (a smelt, mine or
  attack with count 1, the same craft again).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from mirrorcraft.agents.llm.replies import whole_number
from mirrorcraft.agents.llm.worldview import action_key, items_needed, norm, station_of
from mirrorcraft.body.observation import Observation

NODE_CAPACITY = 48
MEMORY_CAPACITY = 32
CAUSE_TYPES = ("item", "station", "tool", "environment")
EFFECT_TYPES = ("item", "advancement", "facility")


def sample_key(action: Any) -> str:
    if not isinstance(action, Mapping):
        return str(action)[:200]
    args = {k: v for k, v in dict(action.get("args") or {}).items() if k != "count"}
    return f"{action.get('skill')} {json.dumps(args, sort_keys=True, separators=(',', ':'))}"


@dataclass(frozen=True)
class Transition:
    step: int
    action: dict[str, Any]
    subgoal: str
    ok: bool
    reason: str
    initial: dict[str, int]
    ingredients: dict[str, int]
    fuel: dict[str, int]
    added: dict[str, int]
    new_facilities: tuple[str, ...] = ()
    new_advancements: tuple[str, ...] = ()
    probe: bool = False

    @cached_property
    def key(self) -> str:
        """The sample key (computed once: a recorded transition never changes)."""
        return sample_key(self.action)

    @property
    def effects(self) -> set[str]:
        return set(self.added) | set(self.new_facilities) | set(self.new_advancements)

    def sample(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "step": self.step,
            "initialItems": self.initial,
            "consumedItems": {
                k: self.ingredients.get(k, 0) + self.fuel.get(k, 0)
                for k in sorted({*self.ingredients, *self.fuel})
            },
            "addedItems": self.added,
        }
        if self.fuel:
            doc["fuelUsed"] = self.fuel
        if self.new_facilities:
            doc["newFacilities"] = list(self.new_facilities)
        if self.new_advancements:
            doc["newAdvancements"] = list(self.new_advancements)
        return doc

    def record(self) -> dict[str, Any]:
        """The factual before/action/after line the actor sees."""
        doc = {
            "step": self.step,
            "action": self.action,
            "subgoal": self.subgoal,
            "ok": self.ok,
            "consumed": self.ingredients,
            "added": self.added,
        }
        if self.reason:
            doc["reason"] = self.reason
        if self.probe:
            doc["probe"] = True
        return doc


@dataclass
class TransitionMemory:
    capacity: int = MEMORY_CAPACITY
    items: list[Transition] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.items)

    def add(self, t: Transition) -> None:
        self.items.append(t)
        del self.items[: max(len(self.items) - self.capacity, 0)]

    def group(self, key: str) -> list[Transition]:
        return [t for t in self.items if t.ok and t.key == key]

    def groups(self, since: int = -1, limit: int = 12) -> list[dict[str, Any]]:
        """Successful samples grouped by sample_key, for groups with a sample newer than ``since``."""
        keys = list(dict.fromkeys(t.key for t in self.items if t.ok and t.step > since))[-limit:]
        out = []
        for key in keys:
            members = self.group(key)
            out.append(
                {
                    "sample_key": key,
                    "station": station_of(members[-1].action),
                    "samples": [m.sample() for m in members],
                }
            )
        return out


@dataclass
class Edge:
    sample_key: str
    causes: list[dict[str, Any]]
    effects: list[dict[str, Any]]
    status: str = "hypothesis"  # hypothesis | learned | verified | rejected
    support: int = 1
    step: int = 0
    probes: list[dict[str, Any]] = field(default_factory=list)

    def names(self) -> set[str]:
        return {c["name"] for c in self.causes} | {e["name"] for e in self.effects}

    def effect_names(self) -> set[str]:
        return {e["name"] for e in self.effects}

    def to_json(self) -> dict[str, Any]:
        doc = {
            "sample_key": self.sample_key,
            "causes": self.causes,
            "effects": self.effects,
            "status": self.status,
            "comparable_samples": self.support,
        }
        if self.probes:
            doc["interventions"] = self.probes
        return doc


def comparable_support(edge: Edge, samples: list[Transition]) -> int:
    """How many samples agree with the edge: same ingredient set as the first, every effect added,
    and every item/tool cause owned or used."""
    if not samples:
        return 0
    base = set(samples[0].ingredients)
    good = 0
    for s in samples:
        owned = set(s.initial) | set(s.ingredients)
        causes_ok = all(c["name"] in owned for c in edge.causes if c["type"] in ("item", "tool"))
        if set(s.ingredients) == base and edge.effect_names() <= s.effects and causes_ok:
            good += 1
    return good


@dataclass
class CausalGraph:
    capacity: int = NODE_CAPACITY
    edges: dict[str, Edge] = field(default_factory=dict)
    evicted: list[str] = field(default_factory=list)
    refused: int = 0

    def nodes(self) -> set[str]:
        out: set[str] = set()
        for e in self.edges.values():
            out |= e.names()
        return out

    def propose(self, doc: Any, memory: TransitionMemory, step: int) -> Edge | None:
        """Add or update one proposed edge; the status comes from the samples, not from the model."""
        if not isinstance(doc, Mapping) or not isinstance(doc.get("sample_key"), str):
            return None
        key = doc["sample_key"]
        samples = memory.group(key)
        if not samples:
            self.refused += 1
            return None  # not a supplied sample_key (or one no longer in memory)
        causes = _factors(doc.get("causes"), CAUSE_TYPES, with_count=True)
        effects = _factors(doc.get("effects"), EFFECT_TYPES, with_count=False)
        seen_effects = set().union(*(s.effects for s in samples))
        if not effects or not {e["name"] for e in effects} <= seen_effects:
            self.refused += 1
            return None  # an effect that no sample showed
        old = self.edges.get(key)
        edge = Edge(key, causes, effects, step=step)
        if old is not None and old.status in ("verified", "rejected"):
            edge.status, edge.probes, edge.support = old.status, old.probes, old.support
        elif (
            old is not None
            and old.status == "learned"
            and old.effect_names() == edge.effect_names()
        ):
            edge.status, edge.support = "learned", old.support
        if not self._fit(edge.names(), keep=key):
            self.refused += 1
            return None
        self.edges[key] = edge
        self.refresh(key, memory)
        return edge

    def refresh(self, key: str, memory: TransitionMemory) -> None:
        edge = self.edges.get(key)
        if edge is None:
            return
        support = comparable_support(edge, memory.group(key))
        edge.support = max(edge.support if edge.status != "hypothesis" else 0, support, 1)
        if edge.status in ("hypothesis", "learned"):
            edge.status = "learned" if support >= 2 or edge.status == "learned" else "hypothesis"

    def _fit(self, names: set[str], keep: str) -> bool:
        rank = {"rejected": 0, "hypothesis": 1, "learned": 2}
        while len(self.nodes_without(keep) | names) > self.capacity:
            candidates = [e for k, e in self.edges.items() if k != keep and e.status in rank]
            if not candidates:
                return False
            victim = min(candidates, key=lambda e: (rank[e.status], e.support, e.step))
            del self.edges[victim.sample_key]
            self.evicted.append(victim.sample_key)
        return True

    def nodes_without(self, key: str) -> set[str]:
        out: set[str] = set()
        for k, e in self.edges.items():
            if k != key:
                out |= e.names()
        return out

    def related(self, target: str, memory: TransitionMemory) -> list[Edge]:
        """Uncertain edges bearing on ``target`` (as effect, as cause, or tried for it), newest first."""
        tried = {t.key for t in memory.items if t.subgoal == target}
        hits = [
            e
            for e in self.edges.values()
            if e.status in ("hypothesis", "learned")
            and (target in e.names() or e.sample_key in tried)
        ]
        return sorted(hits, key=lambda e: (target not in e.effect_names(), -e.step))

    def to_json(self) -> dict[str, Any]:
        return {"nodes": len(self.nodes()), "edges": [e.to_json() for e in self.edges.values()]}


def _factors(raw: Any, types: tuple[str, ...], *, with_count: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if not isinstance(raw, list):
        return out
    for f in raw[:8]:
        if not isinstance(f, Mapping) or not norm(f.get("name")):
            continue
        kind = str(f.get("type") or "item")
        doc: dict[str, Any] = {"type": kind if kind in types else types[0], "name": norm(f["name"])}
        if with_count:
            count = whole_number(f.get("count", 1))  # "2" (quoted) is 2 too
            doc["count"] = count if count is not None and 0 < count <= 64 else 1
        if doc not in out:
            out.append(doc)
    return out


def plan_probe(
    edge: Edge, memory: TransitionMemory, obs: Observation, tried: set[str]
) -> dict[str, Any] | None:
    """An intervention doable now on the current inventory, or None."""
    samples = memory.group(edge.sample_key)
    if not samples:
        return None
    action = samples[-1].action
    skill, args = action.get("skill"), dict(action.get("args") or {})
    facilities = {f.id for f in obs.facilities}

    def owned(candidate: dict[str, Any]) -> bool:
        return all(obs.inventory.get(k, 0) >= n for k, n in items_needed(candidate).items())

    options: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if skill == "craft_grid" and isinstance(args.get("grid"), list):
        if norm(args.get("station")) == "crafting_table" and "crafting_table" not in facilities:
            return None
        grid = [list(row) for row in args["grid"]]
        cells = sorted({norm(c) for row in grid for c in row if isinstance(c, str) and c})
        if len(cells) >= 2:
            for factor in cells:
                reduced = [list(row) for row in grid]
                spots = [
                    (r, c)
                    for r, row in enumerate(reduced)
                    for c, v in enumerate(row)
                    if norm(v) == factor
                ]
                r, c = spots[-1]
                reduced[r][c] = None
                probe = {
                    "skill": "craft_grid",
                    "args": {"station": args.get("station", "inventory"), "grid": reduced},
                }
                options.append((probe, {"kind": "remove_factor", "factor": factor}))
        options.append(
            (
                {
                    "skill": "craft_grid",
                    "args": {"station": args.get("station", "inventory"), "grid": grid},
                },
                {"kind": "replicate"},
            )
        )
    elif skill == "smelt" and norm(args.get("station") or "furnace") in facilities:
        options.append(
            (
                {
                    "skill": "smelt",
                    "args": {
                        "input": args.get("input"),
                        "station": args.get("station", "furnace"),
                        "count": 1,
                    },
                },
                {"kind": "replicate"},
            )
        )
    elif skill == "mine" and any(n.id == norm(args.get("block")) for n in obs.nearby_blocks):
        options.append(
            (
                {"skill": "mine", "args": {"block": args.get("block"), "count": 1}},
                {"kind": "replicate"},
            )
        )
    elif skill == "attack" and any(n.id == norm(args.get("target")) for n in obs.nearby_entities):
        options.append(
            (
                {"skill": "attack", "args": {"target": args.get("target"), "count": 1}},
                {"kind": "replicate"},
            )
        )
    for probe, info in options:
        if owned(probe) and action_key(probe) not in tried:
            return {"action": probe, "edge": edge.sample_key, **info}
    return None


def judge_probe(probe: Mapping[str, Any], edge: Edge, ok: bool, effects: set[str]) -> str:
    """What an executed probe shows; updates the edge. Returns a short verdict."""
    shown = ok and edge.effect_names() <= effects
    if probe["kind"] == "remove_factor":
        factor = probe["factor"]
        for c in edge.causes:
            if c["name"] == factor:
                c["intervention"] = "not_needed" if shown else "needed"
        if not shown:
            edge.status = "verified"
        verdict = f"without {factor}: " + (
            "effect still appeared" if shown else "effect disappeared"
        )
    else:
        edge.status = "verified" if shown else "rejected"
        verdict = "repeated: " + ("effect reproduced" if shown else "effect not reproduced")
    edge.probes.append({"action": probe["action"], "result": verdict})
    return verdict
