"""What the goal-regression planner hands out and remembers: plan steps, its per-episode
memory, the keys it files actions and inventories under, and an advancement's goal."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.rules.ruleset import RuleSet


@dataclass
class PlanStep:
    action: dict[str, Any]
    thought: str
    expects: tuple[str, Any] | None = None
    """What the planner predicts: ("craft", option key) or ("smelt", (input, station))."""


class Blocked(Exception):
    pass


@dataclass
class Memory:
    """What the planner remembers within an episode (cleared at the start of each)."""

    step: int = 0
    failures: set[tuple[str, str]] = field(default_factory=set)
    seen: set[str] = field(default_factory=set)
    """Blocks and creatures observed nearby at some point in this episode."""
    explore_cooldown: dict[str, int] = field(default_factory=dict)
    absent: set[str] = field(default_factory=set)
    """Targets that exploring every region did not find: not worth looking for again."""


def action_key(action: Mapping[str, Any]) -> str:
    return json.dumps(action, sort_keys=True)


def inventory_key(inv: Mapping[str, int]) -> str:
    return json.dumps(sorted(inv.items()))


def goal_of(rules: RuleSet, advancement: str) -> tuple[str, tuple[str, ...]]:
    """("enchant", ()) or ("items", any-of items) for an advancement's criteria."""
    adv = rules.advancements[advancement]
    items: list[str] = []
    for crit in adv.criteria.values():
        if crit.trigger == "enchanted_item":
            return ("enchant", ())
        for pred in crit.items:
            items.extend(sorted(pred.items or ()))
    return ("items", tuple(dict.fromkeys(items)))
