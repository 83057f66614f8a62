"""What the body tells the hidden evaluator: rule applications and inventory events.

The body reports every place it consulted the active RuleSet, with the exact
inputs and random key, so the evaluator can replay the same application under
vanilla rules and log an encounter when the outcomes differ. None of this is
visible to the agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot_context import LootContext


class RuleApplication(NamedTuple):
    """One place the body consulted the active rules (a named tuple: every block dug makes
    two of them, and a frozen dataclass costs several times as much to make)."""

    kind: str  # craft | cook | loot | harvest | fuel
    step: int
    signature: tuple[str, ...]
    """The semantic signature of the action that applied the rule (see analysis)."""
    outcome: Any
    """A canonical, comparable form of what the active rules produced."""
    rule: str
    """The resource location that decided it, e.g. "recipes/minecraft:oak_planks"."""
    grid: tuple[tuple[str | None, ...], ...] | None = None
    station: str = ""
    item: str = ""
    table: str = ""
    loot_context: LootContext | None = None
    rng_parts: tuple[object, ...] = ()
    """The key of the random draws, so the same draws can be replayed under other rules."""
    block: str = ""
    tool: str | None = None


class EventSink(Protocol):
    def rule_applied(self, app: RuleApplication) -> None: ...

    def inventory_changed(
        self, stacks: Sequence[ItemStack], gained: Sequence[ItemStack], step: int
    ) -> None: ...

    def item_enchanted(self, item: ItemStack, levels: int, step: int) -> None: ...


class NullSink:
    def rule_applied(self, app: RuleApplication) -> None:
        return None

    def inventory_changed(
        self, stacks: Sequence[ItemStack], gained: Sequence[ItemStack], step: int
    ) -> None:
        return None

    def item_enchanted(self, item: ItemStack, levels: int, step: int) -> None:
        return None
