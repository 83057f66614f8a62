"""Voyager's pieces that need no model: programs, the success check, and the procedure library.

A program is a named, bounded list of primitive actions with a declared subgoal
and an observable success condition. ``check_success`` evaluates that condition
deterministically on the observations before and after the program; the critic
call sees its verdict as evidence. ``Library`` keeps at most 16 verified
programs per episode and retrieves at most 5 of them by a deterministic
relevance score (see ``Library.score``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.agents.llm.replies import action_from, number, whole_number
from mirrorcraft.agents.llm.worldview import (
    action_target,
    have,
    items_needed,
    moved,
    norm,
    tokens,
    visible,
)
from mirrorcraft.body.observation import Observation

MAX_PROGRAM_ACTIONS = 4
LIBRARY_SIZE = 16
RETRIEVE_LIMIT = 5
SUCCESS_KINDS = (
    "inventory_at_least",
    "inventory_delta",
    "progress_increase",
    "facility_available",
    "target_visible",
    "position_change",
    "action_result",
    "state_change",
)
_NAME = re.compile(r"[^a-z0-9_]+")


@dataclass(frozen=True)
class Program:
    name: str
    description: str
    subgoal: str
    success: Mapping[str, Any]
    actions: tuple[dict[str, Any], ...]
    reused: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "subgoal": self.subgoal,
            "success": dict(self.success),
            "actions": [dict(a) for a in self.actions],
        }


def parse_program(doc: dict[str, Any] | None, library: Library) -> tuple[Program | None, str]:
    """A program (new, or a library entry to reuse) from a reply, or why the reply is unusable."""
    if doc is None:
        return None, "no JSON object found"
    reuse = doc.get("reuse_skill")
    if isinstance(reuse, str) and not reuse.strip():
        reuse = None  # an empty field beside a new program (the prompt's keys all filled in)
    if reuse is not None:
        entry = library.get(str(reuse))
        if entry is None:
            return None, f"reuse_skill names {str(reuse)[:60]!r}, which is not in the library"
        p = entry.program
        return Program(p.name, p.description, p.subgoal, p.success, p.actions, reused=True), ""
    raw = doc.get("program")
    if not isinstance(raw, dict):
        return None, "no 'program' object and no 'reuse_skill'"
    actions_raw = raw.get("actions")
    if not isinstance(actions_raw, list) or not actions_raw:
        return None, "program.actions must be a non-empty list"
    if len(actions_raw) > MAX_PROGRAM_ACTIONS:
        return (
            None,
            f"program has {len(actions_raw)} actions; at most {MAX_PROGRAM_ACTIONS} are allowed",
        )
    actions = []
    for i, item in enumerate(actions_raw, 1):
        action, problem = action_from(item if isinstance(item, dict) else None)
        if action is None:
            return None, f"action {i} is not usable: {problem or 'not an object'}"
        actions.append(action)
    success = raw.get("success")
    if not isinstance(success, dict) or success.get("kind") not in SUCCESS_KINDS:
        return None, f"success.kind must be one of {', '.join(SUCCESS_KINDS)}"
    needs = {"inventory_at_least": "item", "target_visible": "target"}.get(str(success["kind"]))
    if needs and not success.get(needs):
        return None, f"success of kind {success['kind']} needs a {needs!r} field"
    if success["kind"] == "facility_available" and not (
        success.get("facility") or success.get("item")
    ):
        return None, "success of kind facility_available needs a 'facility' field"
    name = _NAME.sub("_", str(raw.get("name") or "").lower()).strip("_")[:48] or "unnamed_program"
    subgoal = str(raw.get("subgoal") or "").strip()[:120] or name
    return Program(
        name, str(raw.get("description") or "")[:240], subgoal, dict(success), tuple(actions)
    ), ""


def _count(value: Any, default: int = 1) -> int:
    """A success condition's count: a positive whole number, also when quoted ("3")."""
    n = whole_number(value)
    return n if n is not None and n > 0 else default


def _distance(value: Any) -> float | None:
    """A success condition's distance: a positive number, also when quoted ("4")."""
    n = number(value)
    return float(n) if n is not None and n > 0 else None


def check_success(
    success: Mapping[str, Any],
    start: Observation,
    final: Observation,
    trace: list[dict[str, Any]],
    planned: int,
) -> dict[str, Any]:
    """Evaluate a program's declared success condition on what was observed. Never raises."""
    kind = str(success.get("kind"))
    item = norm(success.get("item"))
    count = _count(success.get("count"))
    passed = False
    evidence: dict[str, Any] = {}
    if kind == "inventory_at_least":
        evidence = {"item": item, "have": final.inventory.get(item, 0), "need": count}
        passed = final.inventory.get(item, 0) >= count
    elif kind == "inventory_delta":
        if item:
            delta = final.inventory.get(item, 0) - start.inventory.get(item, 0)
            evidence = {"item": item, "delta": delta, "need": count}
            passed = delta >= count
        else:
            gained = {
                k: v - start.inventory.get(k, 0)
                for k, v in final.inventory.items()
                if v > start.inventory.get(k, 0)
            }
            evidence = {"gained": gained}
            passed = bool(gained)
    elif kind == "progress_increase":
        evidence = {"before": start.progress.score, "after": final.progress.score}
        passed = final.progress.score > start.progress.score
    elif kind == "facility_available":
        name = norm(success.get("facility") or item)
        limit = _distance(success.get("distance"))
        near = [f.distance for f in final.facilities if f.id == name]
        evidence = {"facility": name, "nearest": min(near) if near else None}
        passed = bool(near) and (limit is None or min(near) <= limit)
    elif kind == "target_visible":
        name = norm(success.get("target"))
        limit = _distance(success.get("distance"))
        near = [
            n.distance
            for n in (*final.nearby_blocks, *final.nearby_entities, *final.nearby_drops)
            if n.id == name
        ]
        evidence = {"target": name, "nearest": min(near) if near else None}
        passed = bool(near) and (limit is None or min(near) <= limit)
    elif kind == "position_change":
        limit = _distance(success.get("distance")) or 1.0
        evidence = {"moved": round(moved(start, final), 1), "need": limit}
        passed = moved(start, final) >= limit
    elif kind == "action_result":
        evidence = {
            "executed": len(trace),
            "planned": planned,
            "all_ok": all(t["ok"] for t in trace),
        }
        passed = len(trace) == planned and all(t["ok"] for t in trace)
    elif kind == "state_change":
        changes = {
            "inventory": dict(start.inventory) != dict(final.inventory),
            "equipped": dict(start.equipped) != dict(final.equipped),
            "position": start.position != final.position,
            "facilities": {f.id for f in start.facilities} != {f.id for f in final.facilities},
            "progress": final.progress.score > start.progress.score,
        }
        evidence = {k: v for k, v in changes.items() if v}
        passed = any(changes.values())
    return {"kind": kind, "passed": passed, "evidence": evidence}


@dataclass
class Skill:
    program: Program
    added_at: int
    order: int
    uses: int = 1
    failures: int = 0

    def card(self) -> dict[str, Any]:
        return {
            **self.program.to_json(),
            "verified_uses": self.uses,
            "failed_reuses": self.failures,
        }


@dataclass
class Library:
    """Verified programs of this episode (at most ``LIBRARY_SIZE``)."""

    capacity: int = LIBRARY_SIZE
    skills: dict[str, Skill] = field(default_factory=dict)
    added: int = 0
    evicted: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.skills)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(_NAME.sub("_", name.strip().lower()).strip("_"))

    def add(self, program: Program, step: int) -> Skill:
        """Store a verified program. The same name or the same actions update the existing entry.

        When full, the entry with the fewest verified uses goes, the oldest first among equals.
        """
        same = self.skills.get(program.name) or next(
            (s for s in self.skills.values() if s.program.actions == program.actions), None
        )
        if same is not None:
            same.uses += 1
            if not program.reused:
                same.program = Program(
                    same.program.name,
                    program.description or same.program.description,
                    program.subgoal,
                    program.success,
                    program.actions,
                )
            return same
        while len(self.skills) >= self.capacity:
            victim = min(self.skills.values(), key=lambda s: (s.uses, s.order))
            del self.skills[victim.program.name]
            self.evicted.append(victim.program.name)
        self.added += 1
        skill = Skill(
            Program(
                program.name, program.description, program.subgoal, program.success, program.actions
            ),
            step,
            self.added,
        )
        self.skills[program.name] = skill
        return skill

    def failed(self, name: str) -> None:
        skill = self.skills.get(name)
        if skill is not None:
            skill.failures += 1

    @staticmethod
    def score(skill: Skill, obs: Observation) -> float:
        """Relevance of a library entry to the current state and the next milestone.

        +3 per word shared between the entry (name, subgoal, description, success
        item/target/facility, action arguments) and the next unfinished milestone
        (id, title, description); +2 when every item its first action submits is
        owned now, -2 when one is missing; +1 when the block/creature its first
        action goes to is visible now; -3 when its success condition already
        holds (an inventory or facility goal that is met); +0.5 per verified use
        (at most 3 counted); -1 per failed reuse.
        """
        p = skill.program
        words = tokens(
            p.name,
            p.subgoal,
            p.description,
            *(str(v) for v in p.success.values()),
            *(str(v) for a in p.actions for v in a.get("args", {}).values() if isinstance(v, str)),
            *(
                str(c)
                for a in p.actions
                for row in a.get("args", {}).get("grid") or []
                if isinstance(row, list | tuple)
                for c in row
                if c
            ),
        )
        nxt = next((m for m in obs.progress.milestones if not m.done), None)
        goal = tokens(nxt.advancement, nxt.title, nxt.description) if nxt else set()
        value = 3.0 * len(words & goal)
        first = p.actions[0]
        need = items_needed(first)
        if need:
            value += 2.0 if all(obs.inventory.get(k, 0) >= n for k, n in need.items()) else -2.0
        target = action_target(first)
        if target and (visible(obs, target) or target == "log"):
            value += 1.0
        kind = p.success.get("kind")
        if kind == "inventory_at_least" and have(
            obs, str(p.success.get("item")), _count(p.success.get("count"))
        ):
            value -= 3.0
        if kind == "facility_available" and any(
            f.id == norm(p.success.get("facility") or p.success.get("item")) for f in obs.facilities
        ):
            value -= 3.0
        value += 0.5 * min(skill.uses, 3) - 1.0 * skill.failures
        return value

    def retrieve(self, obs: Observation, limit: int = RETRIEVE_LIMIT) -> list[Skill]:
        """At most ``limit`` entries with a positive score, best first (newer first among equals)."""
        scored = [(self.score(s, obs), s) for s in self.skills.values()]
        ranked = sorted(
            (x for x in scored if x[0] > 0), key=lambda x: (-x[0], -x[1].order, x[1].program.name)
        )
        return [s for _v, s in ranked[:limit]]
