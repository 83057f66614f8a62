"""What a skill call returns: success or a machine reason, and what it changed.

A result never names a rule suite, a datapack file or whether a rule was changed;
it reports what the body saw (items produced and consumed, the inventory change).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Failure reasons (machine codes). Each comes with a short human message.
INVALID_ARGS = "invalid_args"
NEEDS_TOOL = "needs_tool"
MISSING_ITEM = "missing_item"
NEEDS_TABLE = "needs_table"
NEEDS_STATION = "needs_station"
STATION_UNREACHABLE = "station_unreachable"
NO_TARGET_NEARBY = "no_target_nearby"
TARGET_UNREACHABLE = "target_unreachable"
NOT_SEARCHABLE = "not_searchable"
NOT_FOUND = "not_found"
NO_FUEL = "no_fuel"
NO_RESULT = "no_result"
NO_SPOT = "no_spot"
PICKUP_FAILED = "pickup_failed"
INVENTORY_FULL = "inventory_full"
NOT_ENCHANTABLE = "not_enchantable"
NOT_ENOUGH_LEVELS = "not_enough_levels"
NOT_PLACEABLE = "not_placeable"
NOT_EQUIPPABLE = "not_equippable"
NO_EFFECT = "no_effect"
DIED = "died"
"""The player died during the call (real servers only; the embedded worlds are peaceful): the
episode ends there, with termination ``death``."""

REASONS = (
    INVALID_ARGS,
    NEEDS_TOOL,
    MISSING_ITEM,
    NEEDS_TABLE,
    NEEDS_STATION,
    STATION_UNREACHABLE,
    NO_TARGET_NEARBY,
    TARGET_UNREACHABLE,
    NOT_SEARCHABLE,
    NOT_FOUND,
    NO_FUEL,
    NO_RESULT,
    NO_SPOT,
    PICKUP_FAILED,
    INVENTORY_FULL,
    NOT_ENCHANTABLE,
    NOT_ENOUGH_LEVELS,
    NOT_PLACEABLE,
    NOT_EQUIPPABLE,
    NO_EFFECT,
    DIED,
)


@dataclass(frozen=True)
class ActionResult:
    skill: str
    args: Mapping[str, Any]
    ok: bool
    reason: str = ""
    message: str = ""
    produced: Mapping[str, int] = field(default_factory=dict)
    consumed: Mapping[str, int] = field(default_factory=dict)
    inventory_delta: Mapping[str, int] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "args": dict(self.args),
            "ok": self.ok,
            "reason": self.reason,
            "message": self.message,
            "produced": dict(sorted(self.produced.items())),
            "consumed": dict(sorted(self.consumed.items())),
            "inventory_delta": dict(sorted(self.inventory_delta.items())),
            "details": dict(sorted(self.details.items())),
        }


def failure(
    skill: str, args: Mapping[str, Any], reason: str, message: str, **details: Any
) -> ActionResult:
    return ActionResult(skill, args, False, reason, message, details=details)
