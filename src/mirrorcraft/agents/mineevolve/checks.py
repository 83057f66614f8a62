"""Completion checks of subgoals and skills, evaluated on the agent's own observation.

A check is a small JSON object: ``{"type": "inv_ge", "item": "stick", "n": 4}``,
``{"type": "inv_gain", "item": "stick", "n": 4}`` (gained since the subgoal began:
the form reusable knowledge uses, as it does not depend on what was owned before),
``{"type": "facility", "block": "crafting_table"}`` (placed nearby),
``{"type": "milestone", "advancement": "story/smelt_iron"}`` (completed) or
``{"type": "visible", "target": "iron_ore"}`` (listed among nearby blocks,
creatures or drops), ``{"type": "equipped", "item": "iron_pickaxe"}`` (held or
worn) or ``{"type": "action_ok"}`` (the subgoal's latest action succeeded: for
actions whose own result is the only evidence). Nothing here reads a rule set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mirrorcraft.agents.llm.worldview import norm
from mirrorcraft.body.observation import Observation

CHECK_TYPES = ("inv_ge", "inv_gain", "facility", "milestone", "visible", "equipped", "action_ok")
COUNTED = ("inv_ge", "inv_gain")
_FIELD = {
    "inv_ge": "item",
    "inv_gain": "item",
    "facility": "block",
    "milestone": "advancement",
    "visible": "target",
    "equipped": "item",
    "action_ok": "",
}


@dataclass(frozen=True)
class Check:
    type: str
    target: str
    n: int = 1

    def to_json(self) -> dict[str, Any]:
        if self.type == "action_ok":
            return {"type": "action_ok"}
        doc: dict[str, Any] = {"type": self.type, _FIELD[self.type]: self.target}
        if self.type in COUNTED:
            doc["n"] = self.n
        return doc

    def describe(self) -> str:
        if self.type == "inv_ge":
            return f"at least {self.n} {self.target} in inventory"
        if self.type == "inv_gain":
            return f"{self.n} more {self.target} than when the subgoal began"
        if self.type == "facility":
            return f"{self.target} placed nearby"
        if self.type == "milestone":
            return f"advancement {self.target} completed"
        if self.type == "equipped":
            return f"{self.target} held or worn"
        if self.type == "action_ok":
            return "the action succeeded"
        return f"{self.target} in sight"


def parse_check(raw: Any) -> Check | str:
    """A ``Check`` or the reason the object is not one."""
    if not isinstance(raw, Mapping):
        return "a check must be an object"
    kind = raw.get("type")
    if kind not in CHECK_TYPES:
        return f"check type must be one of {', '.join(CHECK_TYPES)}"
    if kind == "action_ok":
        return Check("action_ok", "")
    target = raw.get(_FIELD[kind])
    if not isinstance(target, str) or not target.strip() or len(target) > 64:
        return f"a {kind} check needs a '{_FIELD[kind]}' id"
    n = raw.get("n", 1)
    if kind in COUNTED and (not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 2304):
        return "n must be an integer from 1 to 2304"
    name = target.strip() if kind == "milestone" else norm(target)
    return Check(kind, name, int(n) if kind in COUNTED else 1)


def parse_checks(raw: Any) -> tuple[tuple[Check, ...], str]:
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes) or not raw:
        return (), "checks must be a non-empty list"
    out = []
    for item in raw:
        check = parse_check(item)
        if isinstance(check, str):
            return (), check
        out.append(check)
    return tuple(out), ""


def owned(obs: Observation, item: str) -> int:
    """Units of ``item`` the agent owns, counting a worn or held piece."""
    worn = sum(1 for v in obs.equipped.values() if v and norm(v) == item)
    return obs.inventory.get(item, 0) + worn


def fraction(
    check: Check,
    obs: Observation,
    last_ok: bool | None = None,
    start: Observation | None = None,
) -> float:
    """How far the observation is towards the check, from 0 to 1.

    ``last_ok`` is whether the subgoal's latest action succeeded (None: none ran
    yet); ``start`` is the observation the subgoal began at (for ``inv_gain``).
    """
    if check.type == "inv_gain":
        if start is None:
            return 0.0
        return min(1.0, max(owned(obs, check.target) - owned(start, check.target), 0) / check.n)
    if check.type == "action_ok":
        return float(last_ok is True)
    if check.type == "equipped":
        return float(any(v and norm(v) == check.target for v in obs.equipped.values()))
    if check.type == "inv_ge":
        return min(1.0, owned(obs, check.target) / check.n)
    if check.type == "facility":
        return float(any(f.id == check.target for f in obs.facilities))
    if check.type == "milestone":
        done = {norm(a) for a in obs.progress.completed_advancements}
        return float(norm(check.target) in done)
    seen = {n.id for n in (*obs.nearby_blocks, *obs.nearby_entities, *obs.nearby_drops)}
    return float(check.target in seen or (check.target == "log" and any("_log" in s for s in seen)))


def satisfied(
    checks: Sequence[Check],
    obs: Observation,
    last_ok: bool | None = None,
    start: Observation | None = None,
) -> bool:
    return bool(checks) and all(fraction(c, obs, last_ok, start) >= 1.0 for c in checks)
