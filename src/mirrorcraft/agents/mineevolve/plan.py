"""Plans: short lists of subgoals, each one body action with completion checks.

A subgoal names one semantic-skill action, which the executor repeats until the
subgoal's checks hold, it has used ``max_actions`` actions, or too many of its
actions failed. ``source`` records which knowledge entry (if any) the subgoal came
from, so the outcome can be credited to that entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from mirrorcraft.agents.mineevolve.checks import Check, parse_checks
from mirrorcraft.body.actions import Action, parse_action

ID_LENGTH = 32
"""A subgoal id is kept to this many characters."""
KINDS = ("skill", "remedy", "note", "reflection")
MAX_CONSTRAINTS = 8
"""A plan keeps at most this many global constraints, each to 160 characters."""


@dataclass(frozen=True)
class Subgoal:
    id: str
    condition: str
    action: dict[str, Any]
    checks: tuple[Check, ...]
    max_actions: int
    source: str = ""
    """"skill:<id>", "remedy:<id>" or "" (the planner's own step)."""

    @property
    def skill(self) -> str:
        return str(self.action.get("skill", ""))

    @property
    def target(self) -> str:
        """The id the subgoal is about: its first check's target, else the action's first id."""
        for check in self.checks:
            if check.target:
                return check.target
        for value in self.action.get("args", {}).values():
            if isinstance(value, str):
                return value
        return ""

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "subgoal_id": self.id,
            "condition": self.condition,
            "action": self.action,
            "checks": [c.to_json() for c in self.checks],
            "max_actions": self.max_actions,
        }
        if self.source:
            doc["source"] = self.source
        return doc

    def signature(self) -> str:
        """Action and checks, without ids: two subgoals with the same signature do the same thing."""
        args = self.action.get("args", {})
        arg_text = ",".join(f"{k}={args[k]}" for k in sorted(args))
        checks = ";".join(sorted(f"{c.type}:{c.target}:{c.n}" for c in self.checks))
        return f"{self.skill}({arg_text})->{checks}"


def _plain(value: Any) -> Any:
    """JSON-shaped copy of validated arguments (lists stay lists, as the body expects)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def parse_subgoal(raw: Any, index: int, max_actions: int) -> Subgoal | str:
    """A validated subgoal, or the reason the object is not an executable one."""
    if not isinstance(raw, Mapping):
        return f"subgoal {index + 1} is not an object"
    action_raw = raw.get("action")
    if not isinstance(action_raw, Mapping) and "skill" in raw:
        action_raw = {"skill": raw.get("skill"), "args": raw.get("args", {})}
    if not isinstance(action_raw, Mapping):
        return f"subgoal {index + 1} has no action"
    action = {"skill": action_raw.get("skill"), "args": action_raw.get("args", {})}
    parsed = parse_action(action)
    if not isinstance(parsed, Action):
        return f"subgoal {index + 1}: {parsed.message}"
    checks, problem = parse_checks(raw.get("checks"))
    if problem:
        return f"subgoal {index + 1}: {problem}"
    limit = raw.get("max_actions", max_actions)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        return f"subgoal {index + 1}: max_actions must be a positive integer"
    sid = raw.get("subgoal_id")
    source = raw.get("source") or raw.get("repair_source") or ""
    return Subgoal(
        id=str(sid)[:ID_LENGTH] if isinstance(sid, str) and sid else f"sg_{index + 1:03d}",
        condition=str(raw.get("condition") or parsed.skill)[:160],
        action={"skill": parsed.skill, "args": _plain(action["args"])},
        checks=checks,
        max_actions=min(limit, max_actions),
        source=str(source)[:64] if isinstance(source, str) else "",
    )


def entry_ref(text: str) -> str:
    """The entry id a subgoal's source or a repair's remedy list names: the id the prompt
    shows (``remedy_0003``) or the kind before it (``remedy:remedy_0003``)."""
    kind, sep, rest = text.partition(":")
    return rest if sep and kind in KINDS else text


def parse_subgoals(
    raw: Any, max_actions: int, max_subgoals: int
) -> tuple[tuple[Subgoal, ...], str]:
    """Every subgoal of a list, or ((), the first problem)."""
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes) or not raw:
        return (), "subgoals must be a non-empty list"
    if len(raw) > max_subgoals:
        return (), f"at most {max_subgoals} subgoals per plan"
    out = []
    for i, item in enumerate(raw):
        sg = parse_subgoal(item, i, max_actions)
        if isinstance(sg, str):
            return (), sg
        out.append(sg)
    return tuple(out), ""


@dataclass
class Plan:
    """The current plan; ``done`` subgoals form the completed prefix the adaptor keeps."""

    id: str
    subgoals: list[Subgoal]
    done: int = 0
    constraints: tuple[str, ...] = ()

    @property
    def current(self) -> Subgoal | None:
        return self.subgoals[self.done] if self.done < len(self.subgoals) else None

    @property
    def prefix(self) -> list[Subgoal]:
        return self.subgoals[: self.done]

    @property
    def suffix(self) -> list[Subgoal]:
        return self.subgoals[self.done :]

    def with_suffix(self, plan_id: str, suffix: Sequence[Subgoal]) -> Plan:
        """The same completed prefix followed by a new unfinished part (ids made unique)."""
        taken = {s.id for s in self.prefix}
        fresh = []
        for i, sg in enumerate(suffix):
            sid = sg.id if sg.id not in taken else f"{sg.id}_r{i + 1}"
            taken.add(sid)
            fresh.append(replace(sg, id=sid))
        return Plan(plan_id, [*self.prefix, *fresh], self.done, self.constraints)


def _strings(raw: Any, limit: int, length: int) -> tuple[str, ...] | None:
    """The strings of a reply's list (others skipped), or None when it is not a list."""
    if not isinstance(raw, list):
        return None
    return tuple(str(v)[:length] for v in raw if isinstance(v, str) and v.strip())[:limit]


@dataclass(frozen=True)
class PlanReply:
    """What a plan or repair reply says: its subgoals, the plan's ``global_constraints``,
    and a repair's ``kept_prefix`` (None: not stated) and ``active_remedies_used``."""

    subgoals: tuple[Subgoal, ...]
    constraints: tuple[str, ...] = ()
    kept_prefix: tuple[str, ...] | None = None
    remedies_used: tuple[str, ...] = ()

    def claimed(self, shown: Sequence[str]) -> tuple[tuple[str, ...], int]:
        """(the remedies among ``shown`` that ``active_remedies_used`` names and no subgoal's
        source names: each credited once, apart from its subgoals; how many named ids are
        not among ``shown``)."""
        sourced = {entry_ref(sg.source) for sg in self.subgoals}
        named = [entry_ref(r) for r in self.remedies_used]
        unknown = sum(1 for r in named if r not in shown)
        picked = [r for r in dict.fromkeys(named) if r in shown and r not in sourced]
        return tuple(picked), unknown


def parse_plan_reply(
    doc: Mapping[str, Any] | None, key: str, max_actions: int, max_subgoals: int
) -> tuple[PlanReply | None, str]:
    """A plan (``key`` "subgoals") or repair ("repaired_suffix") reply, or (None, the problem)."""
    if doc is None:
        return None, "no JSON object found"
    subgoals, problem = parse_subgoals(doc.get(key), max_actions, max_subgoals)
    if not subgoals:
        return None, problem
    return PlanReply(
        subgoals,
        _strings(doc.get("global_constraints"), MAX_CONSTRAINTS, 160) or (),
        _strings(doc.get("kept_prefix"), 64, 64),
        _strings(doc.get("active_remedies_used"), 16, 64) or (),
    ), ""
